"""A test client that holds the service to its OpenAPI document: every response a test receives
must have a documented status for its operation and a body matching the documented schema."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
import orjson
from aiohttp.test_utils import TestClient
from multidict import CIMultiDictProxy

V1 = "/api/v1"


@dataclass
class Reply:
    status: int
    headers: CIMultiDictProxy[str]
    raw: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.raw)


def _pattern(template: str) -> re.Pattern[str]:
    return re.compile(
        "^"
        + re.sub(r"\{[^}]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}"))
        + "$"
    )


class Api:
    def __init__(self, client: TestClient[Any, Any], tokens: dict[str, str]) -> None:
        self.client = client
        self.tokens = tokens  # role → token, for `as_=role`
        self.doc: dict[str, Any] | None = None
        self.checked: set[tuple[str, str, str]] = set()  # (method, template, status)

    async def document(self) -> dict[str, Any]:
        if self.doc is None:
            resp = await self.client.get(f"{V1}/openapi.json")
            assert resp.status == 200
            self.doc = await resp.json()
        return self.doc

    async def _operation(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        doc = await self.document()
        found = [
            (template, item[method.lower()])
            for template, item in doc["paths"].items()
            if method.lower() in item and _pattern(template).match(path)
        ]
        assert found, f"{method} {path} is not in the OpenAPI document"
        # like the router: a fixed segment wins over a {parameter}
        found.sort(key=lambda pair: pair[0].count("{"))
        return found[0]

    async def call(
        self,
        method: str,
        path: str,
        *,
        as_: str | None = None,
        json: Any = None,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        all_headers = dict(headers or {})
        secret = self.tokens.get(as_) if as_ else None
        if secret:
            all_headers["Authorization"] = f"token {secret}"
        body = data if data is not None else (orjson.dumps(json) if json is not None else None)
        if body is not None:
            all_headers.setdefault("Content-Type", "application/json")
        payload: Any = io.BytesIO(body) if body and len(body) > 2**20 else body  # no loop lock
        resp = await self.client.request(method, V1 + path, data=payload, headers=all_headers)
        reply = Reply(resp.status, resp.headers, await resp.read())
        await self.check(method, path.split("?")[0], reply)
        return reply

    async def check(self, method: str, path: str, reply: Reply) -> None:
        template, op = await self._operation(method, path)
        status = str(reply.status)
        assert status in op["responses"], f"{method} {template} answered undocumented {status}"
        self.checked.add((method.upper(), template, status))
        content = op["responses"][status].get("content")
        if content is None:
            assert reply.raw == b"", f"{method} {template} {status} must have an empty body"
            return
        doc = await self.document()
        schema = {"components": doc["components"], "allOf": [content["application/json"]["schema"]]}
        jsonschema.validate(reply.json, schema, cls=jsonschema.Draft202012Validator)

    async def get(self, path: str, **kw: Any) -> Reply:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, **kw: Any) -> Reply:
        return await self.call("POST", path, **kw)

    async def put(self, path: str, **kw: Any) -> Reply:
        return await self.call("PUT", path, **kw)

    async def delete(self, path: str, **kw: Any) -> Reply:
        return await self.call("DELETE", path, **kw)
