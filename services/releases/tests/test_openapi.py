"""The OpenAPI 3.1 document at /api/v2/openapi.json (built in code, forge_releases.openapi) is
valid, names every route of the service, and every response shape the read side produces matches
it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema
import orjson
from aiohttp import web

from .support import auth, one_repo, rel

COMMON_ROUTES = {"/healthz", "/readyz", "/metrics"}  # forge_common's, not part of this API
PAGE_ROUTES = {  # the HTML pages (docs/pages.md), not part of this API either
    "/{owner}/{repo}",
    "/{owner}/{repo}/releases",
    "/{owner}/{repo}/releases/tag/{tag}",
    "/{owner}/{repo}/download",
    "/{owner}/{repo}/insights",
    "/",  # the start page
    # the release console (docs/console.md)
    "/{owner}/{repo}/releases/new",
    "/{owner}/{repo}/releases/edit/{tag}",
    "/{owner}/{repo}/releases/edit/{tag}/assets",
    "/{owner}/{repo}/releases/edit/{tag}/assets/delete",
    "/{owner}/{repo}/releases/edit/{tag}/rollout",
    "/{owner}/{repo}/releases/edit/{tag}/unpublish",
    "/{owner}/{repo}/releases/edit/{tag}/withdraw",
    "/{owner}/{repo}/releases/edit/{tag}/safety",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/pause",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/resume",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/jump",
    "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/finish",
    "/{owner}/{repo}/settings",
    "/{owner}/{repo}/settings/update-keys",
    "/{owner}/{repo}/settings/update-keys/revoke",
    "/{owner}/{repo}/settings/tauri-key",
    "/-/console.js",
}
# the Gitea and GitHub shapes (docs/compat.md): documented by their own documents
COMPAT_PREFIXES = ("/api/v1/", "/api/v3/", "/{owner}/{repo}/releases.atom")


async def fetch_doc(client: Any) -> dict[str, Any]:
    resp = await client.get("/api/v2/openapi.json")
    assert resp.status == 200 and resp.content_type == "application/json"
    doc: dict[str, Any] = await resp.json()
    return doc


async def test_openapi_document_is_valid_3_1(make_client: Any, load: Any) -> None:
    client = await make_client()
    check_valid(await fetch_doc(client))


def check_valid(doc: dict[str, Any]) -> None:
    """An OpenAPI 3.1 document with valid schemas, unique operation ids and no dangling $ref."""
    assert doc["openapi"] == "3.1.0"
    # every schema is a valid JSON Schema 2020-12 (the dialect of OpenAPI 3.1)
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    # every $ref points at something
    text = orjson.dumps(doc).decode()
    for name in {part.split('"')[0] for part in text.split("#/components/schemas/")[1:]}:
        assert name in doc["components"]["schemas"], name


async def test_openapi_lists_exactly_the_routes_served(make_client: Any) -> None:
    client = await make_client()
    doc = await fetch_doc(client)
    served = served_routes(
        client.app,
        lambda path: (
            path not in COMMON_ROUTES | PAGE_ROUTES and not path.startswith(COMPAT_PREFIXES)
        ),
    )
    documented = {(method, path) for path, item in doc["paths"].items() for method in item}
    assert served == documented


def served_routes(app: web.Application, keep: Callable[[str], bool]) -> set[tuple[str, str]]:
    """(method, path) of every route the application serves whose path `keep` accepts, in the
    document's terms (HEAD is GET's)."""
    return {
        (route.method.lower(), route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD" and keep(route.resource.canonical)
    }


def check(
    doc: dict[str, Any], template: str, status: int, headers: Any, body: bytes, method: str = "get"
) -> None:
    """One response against the document: the status is listed, and the body has its shape."""
    operation = doc["paths"][template][method]
    assert str(status) in operation["responses"], (template, status)
    spec = operation["responses"][str(status)]
    content = spec.get("content")
    if not content:
        assert body == b"", (template, status)
        return
    media = headers.get("Content-Type", "").split(";")[0]
    assert media in content or "*/*" in content, (template, status, media)
    if media == "application/json":
        schema = {**content[media]["schema"], "components": doc["components"]}
        jsonschema.validate(orjson.loads(body), schema, cls=jsonschema.Draft202012Validator)
    for name in spec.get("headers", {}):
        if status == 200 and name != "Link":
            assert name in headers, (template, name)


BASE = "/api/v2/repos/{owner}/{repo}/releases"
CASES: list[tuple[str, str, dict[str, str], int]] = [
    # (template, concrete path, headers, expected status)
    (BASE, "/api/v2/repos/owner/app/releases?limit=1", {}, 200),
    (BASE, "/api/v2/repos/owner/app/releases?drafts=1&prereleases=1", auth("owner"), 200),
    (BASE, "/api/v2/repos/owner/nothing/releases", {}, 404),
    (BASE, "/api/v2/repos/owner/secret/releases", {}, 401),
    (BASE + "/{tag}", "/api/v2/repos/owner/app/releases/v1.0.0", {}, 200),
    (BASE + "/{tag}", "/api/v2/repos/owner/app/releases/v7", {}, 404),
    (BASE + "/latest", "/api/v2/repos/owner/app/releases/latest", {}, 200),
    (BASE + "/latest", "/api/v2/repos/owner/empty/releases/latest", {}, 404),
    (BASE + "/update", f"{BASE}/update?version=0.1.0&platform=windows", {}, 200),
    (BASE + "/update", f"{BASE}/update?version=0.1.0&platform=darwin&arch=arm64", {}, 200),
    (BASE + "/update", f"{BASE}/update?version=9.0.0&platform=windows", {}, 204),
    (BASE + "/update", f"{BASE}/update?version=x", {}, 400),
    (BASE + "/update", "/api/v2/repos/owner/secret/releases/update?version=1.0.0", {}, 401),
    ("/{owner}/{repo}/releases/download/{tag}/{name}", "/owner/app/releases/download/v1.0.0/"
     "App.exe", {}, 200),
    ("/{owner}/{repo}/releases/download/{tag}/{name}", "/owner/app/releases/download/v1.0.0/"
     "App.exe", {"Range": "bytes=0-1"}, 206),
    ("/{owner}/{repo}/releases/download/{tag}/{name}", "/owner/app/releases/download/v1.0.0/"
     "App.exe", {"Range": "bytes=99-"}, 416),
    ("/{owner}/{repo}/releases/download/{tag}/{name}", "/owner/app/releases/download/v1.0.0/"
     "nothing", {}, 404),
    ("/{owner}/{repo}/releases/latest/download/{name}", "/owner/app/releases/latest/download/"
     "RELEASES", {}, 200),
    ("/{owner}/{repo}/releases/latest/download/{name}", "/owner/secret/releases/latest/download/"
     "RELEASES", {}, 401),
    ("/api/v2/openapi.json", "/api/v2/openapi.json", {}, 200),
    ("/api/v2/repos/{owner}/{repo}/insights", "/api/v2/repos/owner/app/insights", auth("owner"),
     200),
    ("/api/v2/repos/{owner}/{repo}/insights", "/api/v2/repos/owner/app/insights?by=x",
     auth("owner"), 400),
    ("/api/v2/repos/{owner}/{repo}/insights", "/api/v2/repos/owner/app/insights", {}, 404),
    # update feeds (feeds/)
    (BASE + "/feeds/squirrel/{arch}/RELEASES", f"{BASE}/feeds/squirrel/x64/RELEASES", {}, 200),
    (BASE + "/feeds/squirrel/{arch}/RELEASES", "/api/v2/repos/owner/empty/releases/feeds/"
     "squirrel/x64/RELEASES", {}, 404),
    (BASE + "/feeds/electron/{file}", f"{BASE}/feeds/electron/latest-mac.yml", {}, 200),
    (BASE + "/feeds/electron/{file}", f"{BASE}/feeds/electron/latest-linux.yml", {}, 404),
    (BASE + "/feeds/tauri/{target}/{arch}/{current_version}",
     f"{BASE}/feeds/tauri/darwin/aarch64/0.1.0", {}, 204),
    (BASE + "/feeds/tauri/{target}/{arch}/{current_version}",
     f"{BASE}/feeds/tauri/darwin/aarch64/x", {}, 400),
    (BASE + "/feeds/tauri/latest.json", f"{BASE}/feeds/tauri/latest.json", {}, 404),
    ("/{owner}/{repo}/darwin-{arch}/{version}", "/owner/app/darwin-arm64/0.1.0", {}, 200),
    ("/{owner}/{repo}/darwin-{arch}/{version}", "/owner/app/darwin-arm64/9.0.0", {}, 204),
    ("/{owner}/{repo}/darwin-{arch}/{version}", "/owner/app/darwin-arm64/x", {}, 400),
    ("/{owner}/{repo}/darwin-{arch}/{version}", "/owner/secret/darwin-arm64/1.0.0", {}, 401),
    ("/{owner}/{repo}/win32-{arch}/{version}/RELEASES", "/owner/app/win32-x64/0.1.0/RELEASES",
     {}, 200),
]  # fmt: skip


async def test_openapi_every_response_shape_matches(make_client: Any, load: Any) -> None:
    release = rel("v1.0.0", 1, "App.exe", "App-arm64.zip", "RELEASES", "app-full.nupkg")
    world = one_repo([release, rel("v2.0.0", 2, "App.exe", draft=True)])
    world["repos"] += [
        {"owner": "owner", "name": "secret", "private": True},
        {"owner": "owner", "name": "empty"},
    ]
    await load(world)
    client = await make_client()
    doc = await fetch_doc(client)
    for template, path, headers, status in CASES:
        path = path.replace("{owner}", "owner").replace("{repo}", "app")
        resp = await client.get(path, headers=headers)
        assert resp.status == status, path
        check(doc, template, resp.status, resp.headers, await resp.read())
        etag = resp.headers.get("ETag")
        if etag and resp.status == 200:
            again = await client.get(path, headers={**headers, "If-None-Match": etag})
            assert again.status == 304, path
            check(doc, template, 304, again.headers, await again.read())
