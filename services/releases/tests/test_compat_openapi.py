"""The OpenAPI documents of the compat shapes (compat/openapi.py) are valid, name every compat
route of the service, and the responses of each shape match them."""

from __future__ import annotations

import io
from typing import Any

import aiohttp
import pytest

from .publish_support import auth, publish_world
from .test_openapi import COMPAT_PREFIXES, check, check_valid, served_routes

DOCS = ("/api/v1/repos/openapi.json", "/api/v3/openapi.json")
GITEA = "/api/v1/repos/{owner}/{repo}"
GITHUB = "/api/v3/repos/{owner}/{repo}"


async def documents(client: Any) -> dict[str, dict[str, Any]]:
    docs = {}
    for url in DOCS:
        resp = await client.get(url)
        assert resp.status == 200 and resp.content_type == "application/json"
        docs[url] = await resp.json()
    return docs


@pytest.fixture
async def client(make_client: Any, load: Any) -> Any:
    await load(publish_world())
    return await make_client()


async def test_compat_documents_are_valid_3_1(client: Any) -> None:
    for doc in (await documents(client)).values():
        check_valid(doc)


async def test_compat_documents_list_exactly_the_compat_routes(client: Any) -> None:
    docs = await documents(client)
    served = served_routes(client.app, lambda path: path.startswith(COMPAT_PREFIXES))
    documented = {
        (method, path)
        for doc in docs.values()
        for path, item in doc["paths"].items()
        for method in item
    }
    assert served == documented


async def test_compat_responses_match_their_documents(client: Any) -> None:
    docs = await documents(client)
    gitea, github = docs[DOCS[0]], docs[DOCS[1]]

    async def call(
        doc: dict[str, Any], method: str, template: str, path: str, **kw: Any
    ) -> aiohttp.ClientResponse:
        resp = await client.request(method.upper(), path, **kw)
        check(doc, template, resp.status, resp.headers, await resp.read(), method)
        return resp

    writer = auth("writer")
    for doc, root, template in (
        (gitea, "/api/v1/repos/owner/pub", GITEA),
        (github, "/api/v3/repos/owner/pub", GITHUB),
    ):
        created = await call(
            doc,
            "post",
            f"{template}/releases",
            f"{root}/releases",
            json={"tag_name": f"v9-{doc['info']['version']}"},
            headers=writer,
        )
        rid = (await created.json())["id"]
        await call(
            doc,
            "post",
            f"{template}/releases",
            f"{root}/releases",
            json={"tag_name": f"v9-{doc['info']['version']}"},
            headers=writer,
        )  # 409
        await call(doc, "get", f"{template}/releases", f"{root}/releases")
        await call(doc, "get", f"{template}/releases/latest", f"{root}/releases/latest")
        await call(doc, "get", f"{template}/releases/tags/{{tag}}", f"{root}/releases/tags/v1.0.0")
        await call(doc, "get", f"{template}/releases/tags/{{tag}}", f"{root}/releases/tags/nope")
        await call(doc, "get", f"{template}/releases/{{release_id}}", f"{root}/releases/{rid}")
        await call(
            doc,
            "patch",
            f"{template}/releases/{{release_id}}",
            f"{root}/releases/{rid}",
            json={"name": "Nine"},
            headers=writer,
        )
        await call(
            doc,
            "patch",
            f"{template}/releases/{{release_id}}",
            f"{root}/releases/{rid}",
            json={"name": 9},
            headers=writer,
        )  # 422
        await call(
            doc,
            "get",
            f"{template}/releases/{{release_id}}/assets",
            f"{root}/releases/{rid}/assets",
        )
        await call(doc, "get", template, root)
        await call(
            doc,
            "get",
            template,
            "/api/v1/repos/owner/priv" if doc is gitea else "/api/v3/repos/owner/priv",
        )  # 401
        form = aiohttp.FormData()
        form.add_field("attachment", io.BytesIO(b"bytes"), filename="f.bin")
        uploaded = await call(
            doc,
            "post",
            f"{template}/releases/{{release_id}}/assets",
            f"{root}/releases/{rid}/assets?name=f.bin",
            data=form if doc is gitea else b"bytes",
            headers=writer,
        )
        aid = (await uploaded.json())["id"]
        if doc is gitea:
            one = f"{template}/releases/{{release_id}}/assets/{{asset_id}}"
            await call(doc, "get", one, f"{root}/releases/{rid}/assets/{aid}")
            await call(doc, "delete", one, f"{root}/releases/{rid}/assets/{aid}", headers=writer)
        else:
            one = f"{template}/releases/assets/{{asset_id}}"
            await call(doc, "get", one, f"{root}/releases/assets/{aid}")
            await call(
                doc,
                "get",
                one,
                f"{root}/releases/assets/{aid}",
                headers={"Accept": "application/octet-stream"},
            )
            await call(doc, "delete", one, f"{root}/releases/assets/{aid}", headers=writer)
        await call(
            doc,
            "delete",
            f"{template}/releases/{{release_id}}",
            f"{root}/releases/{rid}",
            headers=writer,
        )  # 403: admin only
        await call(
            doc,
            "delete",
            f"{template}/releases/{{release_id}}",
            f"{root}/releases/{rid}",
            headers=auth("owner"),
        )
    feed = await call(github, "get", "/{owner}/{repo}/releases.atom", "/owner/pub/releases.atom")
    assert feed.status == 200
    # not under /api/v3/: the version-2 error body (found by `make fuzz`)
    missing = await call(github, "get", "/{owner}/{repo}/releases.atom", "/nobody/x/releases.atom")
    assert missing.status == 404
