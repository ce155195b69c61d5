"""The gateway's OpenAPI 3.1 document at /api/v1/plugins/openapi.json is true: its schemas are
valid, it lists exactly the public routes the application serves (not /internal/), and every
answer the admin endpoints, the plugin routes and the document give has a documented status and
a body of the documented shape."""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import replace
from typing import Any

import jsonschema
import orjson
from forge_common.config import Settings
from forge_common.event_signature import sign
from forge_common.keys import SETTINGS
from forge_gateway.keys import DELIVERY_WORKER
from forge_gateway.openapi import DOCUMENT_PATH, PROXIED_METHODS
from forge_gateway.service import create_app

ROOT = {"Authorization": "token root-token"}
ALICE = {"Authorization": "token alice-token"}
WORLD = {
    "users": [
        {"name": "root", "admin": True, "tokens": ["root-token"]},
        {"name": "alice", "tokens": ["alice-token"]},
    ]
}
COMMON_ROUTES = {"/healthz", "/readyz", "/metrics"}  # forge_common's, not part of this API
INTERNAL = "/internal/"  # service to service; the reverse proxy never routes it


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", template)
    regex = "".join(
        (".+" if p == "{path}" else "[^/]+") if p.startswith("{") else re.escape(p) for p in parts
    )
    return re.compile(f"^{regex}$")


def check(
    doc: dict[str, Any], method: str, path: str, status: int, headers: Any, body: bytes
) -> str:
    """One answer against the document; returns the operation's template. A fixed segment wins
    over a {parameter}, as in the router."""
    found = sorted(
        (t for t, item in doc["paths"].items() if method in item and _pattern(t).match(path)),
        key=lambda t: t.count("{"),
    )
    assert found, f"{method} {path} is not documented"
    template = found[0]
    responses = doc["paths"][template][method]["responses"]
    spec = responses.get(str(status)) or responses.get("default")
    assert spec is not None, f"{method} {template} answered undocumented {status}"
    content = spec.get("content")
    if content is None:
        assert body == b"", (method, template, status)
        return template
    media = headers.get("Content-Type", "").split(";")[0]
    if "application/json" in content:
        assert media == "application/json", (method, template, status, media)
        schema = {"components": doc["components"], "allOf": [content["application/json"]["schema"]]}
        jsonschema.validate(orjson.loads(body), schema, cls=jsonschema.Draft202012Validator)
    else:
        assert "*/*" in content, (method, template, status)
    return template


def _routes(app: Any) -> set[tuple[str, str]]:
    """(method, path) of every public route, in the document's terms."""
    served = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource else ""
        if route.method == "HEAD" or path in COMMON_ROUTES or path.startswith(INTERNAL):
            continue
        path = path.replace("{path:.*}", "{path}")
        methods = PROXIED_METHODS if route.method == "*" else (route.method.lower(),)
        served |= {(m, path) for m in methods}
    return served


async def test_document_is_openapi_3_1_with_valid_schemas_and_every_public_route(
    gateway: Any,
) -> None:
    client = await gateway([])
    resp = await client.get(DOCUMENT_PATH)
    assert resp.status == 200 and resp.content_type == "application/json"
    doc = await resp.json()
    assert doc["openapi"] == "3.1.0"
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    documented = {(m, p) for p, item in doc["paths"].items() for m in item}
    assert _routes(client.app) == documented
    again = await client.get(DOCUMENT_PATH, headers={"If-None-Match": resp.headers["ETag"]})
    assert again.status == 304
    check(doc, "get", DOCUMENT_PATH, 304, again.headers, await again.read())


async def _post_event(client: Any) -> None:
    event = {
        "id": str(uuid.uuid4()),
        "type": "release.published",
        "occurred_at": "2026-01-02T03:04:05.123456Z",
        "source": "releases",
        "repo_id": 7,
        "org_id": None,
        "actor_id": 1,
        "payload": {"tag": "v1"},
    }
    body = json.dumps({"events": [event]}).encode()
    stamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "X-Forge-Timestamp": str(stamp),
        "X-Forge-Signature": sign(client.app[SETTINGS].events_secret, stamp, body),
    }
    assert (await client.post("/internal/v1/events", data=body, headers=headers)).status == 202


async def test_every_answer_matches_the_document(
    aiohttp_client: Any, settings: Settings, tmp_path: Any, load: Any, fakes: Any, helpers: Any
) -> None:
    await load(WORLD)
    ready = await fakes(helpers.FakePlugin("ready", routes=[("GET", "/hello")]))
    ready.http = ready._echo
    down = f"127.0.0.1:{helpers.free_port()}"
    plugins = [
        helpers.entry(ready),
        helpers.entry("gone", address=down),
        helpers.entry("off", address="unix:/tmp/off.sock", enabled=False),
    ]
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"plugins": plugins}))
    client = await aiohttp_client(create_app(replace(settings, plugins_file=path), helpers.FAST))
    await helpers.eventually(lambda: helpers.managed(client, "ready").health is not None)
    await client.app[DELIVERY_WORKER].stop()  # keep the deliveries as they are set below
    await _post_event(client)
    pool = client.app[DELIVERY_WORKER].pool
    await pool.execute(
        "UPDATE gateway.deliveries SET status = 'dead', attempts = 3, last_error = 'x',"
        " finished_at = now() WHERE plugin = 'gone'"
    )
    delivery = await pool.fetchval("SELECT id FROM gateway.deliveries WHERE plugin = 'gone'")
    doc = await (await client.get(DOCUMENT_PATH)).json()
    admin = "/api/v1/admin/plugins"
    calls: list[tuple[str, str, dict[str, str], int]] = [
        ("get", admin, ROOT, 200),
        ("get", admin, {}, 401),
        ("get", admin, ALICE, 403),
        ("get", admin, {"Authorization": "token nope"}, 401),
        ("get", f"{admin}/gone/deliveries", ROOT, 200),
        ("get", f"{admin}/gone/deliveries?status=dead&limit=5", ROOT, 200),
        ("get", f"{admin}/gone/deliveries?status=nope", ROOT, 400),
        ("get", f"{admin}/gone/deliveries?limit=0", ROOT, 400),
        ("get", f"{admin}/nope/deliveries", ROOT, 404),
        ("get", f"{admin}/gone/deliveries", ALICE, 403),
        ("get", f"{admin}/gone/deliveries/{delivery}", ROOT, 200),
        ("get", f"{admin}/gone/deliveries/99999999", ROOT, 404),
        ("get", f"{admin}/gone/deliveries/x", ROOT, 404),
        ("post", f"{admin}/gone/deliveries/{delivery}/redeliver", ROOT, 202),
        ("post", f"{admin}/gone/deliveries/99999999/redeliver", ROOT, 404),
        ("post", f"{admin}/gone/deliveries/redeliver", ROOT, 202),
        ("post", f"{admin}/gone/deliveries/redeliver", {}, 401),
        ("get", "/api/v1/plugins/ready/hello", {}, 200),
        ("post", "/api/v1/plugins/ready/hello", {}, 405),
        ("get", "/api/v1/plugins/ready/nothing", {}, 404),
        ("get", "/api/v1/plugins/off/hello", {}, 404),
        ("get", "/api/v1/plugins/gone/hello", {}, 503),
        ("get", DOCUMENT_PATH, {}, 200),
        ("get", DOCUMENT_PATH, {"Authorization": "token nope"}, 401),
    ]
    seen = set()
    for method, url, headers, status in calls:
        resp = await client.request(method.upper(), url, headers=headers)
        assert resp.status == status, (method, url, await resp.text())
        template = check(doc, method, url.split("?")[0], status, resp.headers, await resp.read())
        seen.add((method, template))
    # every operation but the plugin route's other methods answered at least once
    operations = {(m, p) for p, item in doc["paths"].items() for m in item}
    untried = {(m, p) for m, p in operations - seen if not p.endswith("{path}")}
    assert untried == set()
