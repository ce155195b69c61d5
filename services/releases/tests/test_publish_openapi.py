"""The write side's responses match /api/v2/openapi.json: every status it produced is listed
for its operation, and every JSON body has the documented shape."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import jsonschema
import orjson
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.service import create_app

from .publish_support import api, auth, publish_world

BASE = "/api/v2/repos/{owner}/{repo}/releases"


def check(doc: dict[str, Any], template: str, method: str, status: int, body: bytes) -> None:
    operation = doc["paths"][template][method]
    assert str(status) in operation["responses"], (template, method, status)
    content = operation["responses"][str(status)].get("content")
    if not content:
        assert body == b"", (template, method, status)
        return
    data = orjson.loads(body)
    schema = {**content["application/json"]["schema"], "components": doc["components"]}
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


async def test_write_responses_match_the_openapi_document(
    settings: Settings, aiohttp_client: Any, load: Any
) -> None:
    await load(publish_world())
    client: TestClient[Any, Any] = await aiohttp_client(create_app(settings))
    doc = await (await client.get("/api/v2/openapi.json")).json()
    pub, w = api("owner/pub"), auth("writer")

    async def call(template: str, method: str, path: str, **kwargs: Any) -> Any:
        resp = await client.request(method.upper(), path, **kwargs)
        body = await resp.read()
        check(doc, template, method, resp.status, body)
        return orjson.loads(body) if body else None

    release = await call(BASE, "post", pub, json={"tag_name": "v2"}, headers=w)
    rid = release["id"]
    await call(BASE, "post", pub, json={"tag_name": "v2"}, headers=w)  # 409
    await call(BASE, "post", pub, json={"tag_name": ""}, headers=w)  # 422
    await call(BASE, "post", pub, data=b"{", headers=w)  # 400
    await call(BASE, "post", pub, json={"tag_name": "v3"})  # 401
    await call(BASE, "post", pub, json={"tag_name": "v3"}, headers=auth("reader"))  # 403
    await call(BASE, "post", api("owner/nope"), json={"tag_name": "v3"}, headers=w)  # 404
    one = f"{BASE}/{{release_id}}"
    await call(one, "patch", f"{pub}/{rid}", json={"body": "Notes"}, headers=w)
    assets = f"{BASE}/{{release_id}}/assets"
    asset = await call(assets, "post", f"{pub}/{rid}/assets?name=a.zip", data=b"a", headers=w)
    await call(assets, "post", f"{pub}/{rid}/assets?name=a.zip", data=b"a", headers=w)  # 409
    await call(assets, "post", f"{pub}/{rid}/assets?name=..", data=b"a", headers=w)  # 422
    big = io.BytesIO(b"x" * (settings.max_body_bytes + 1))
    small = replace(settings, max_upload_bytes=settings.max_body_bytes)
    small_client: TestClient[Any, Any] = await aiohttp_client(create_app(small))
    resp = await small_client.post(f"{pub}/{rid}/assets?name=big.zip", data=big, headers=w)
    check(doc, assets, "post", resp.status, await resp.read())  # 413
    one_asset = f"{BASE}/{{release_id}}/assets/{{asset_id}}"
    await call(one_asset, "delete", f"{pub}/{rid}/assets/{asset['id']}", headers=w)
    await call(one_asset, "delete", f"{pub}/{rid}/assets/{asset['id']}", headers=w)  # 404
    await call(one, "delete", f"{pub}/{rid}", headers=w)  # 403: admin only
    await call(one, "delete", f"{pub}/{rid}", headers=auth("owner"))  # 204
