"""What every service's OpenAPI 3.1 document shares: each document is data, a YAML file beside
the service's code (`load`), validated by openapi-spec-validator and checked against the routes
by the service's tests; the small builders of what is still made in code (the update feeds'
operations, each in its feed's record); and the handler that serves a rendered document with an
ETag."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping
from importlib import resources
from typing import Any

import yaml
from aiohttp import web

from .conditional import etag_of, none_match, not_modified

JSON = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.Response]]

# A document is the same for every caller: shared caches may keep it, revalidating by ETag.
PUBLIC = {"Cache-Control": "public, no-cache"}


def load(package: str, name: str) -> JSON:
    """The document in the YAML file `name` of the importable `package`."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    # libyaml's loader when PyYAML was built with it: the pure-Python one takes half a second
    # for the orgs document, paid by every process that imports a route table
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded: JSON = yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader, C or Python)
    return loaded


def ref(name: str) -> JSON:
    """A reference to the document's schema `name`."""
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(description: str, schema: Mapping[str, Any], **extra: Any) -> JSON:
    """A response with a JSON body of `schema` (`extra`: headers and the like)."""
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


def error(description: str, schema: str = "Error") -> JSON:
    """An error response whose body is the document's error schema."""
    return json_content(description, ref(schema))


def path_param(name: str, schema: Mapping[str, Any] | None = None, description: str = "") -> JSON:
    """A path parameter (a string unless `schema` says otherwise)."""
    param = {"name": name, "in": "path", "required": True, "schema": schema or {"type": "string"}}
    return {**param, "description": description} if description else param


def query_param(name: str, schema: Mapping[str, Any], description: str) -> JSON:
    """An optional query parameter."""
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


def render(built: Mapping[str, Any]) -> bytes:
    """A document as served: indented JSON, in the order built."""
    return (json.dumps(built, indent=2) + "\n").encode()


def document_handler(build: Callable[[], Mapping[str, Any]]) -> Handler:
    """A GET handler serving the document `build` returns, rendered once (at the first request),
    with the ETag of its bytes (304 on a matching If-None-Match)."""

    @functools.cache
    def rendered() -> tuple[bytes, str]:
        body = render(build())
        return body, etag_of(body)

    async def serve(request: web.Request) -> web.Response:
        body, etag = rendered()
        if none_match(request, etag):
            return not_modified(etag, PUBLIC)
        return web.Response(
            body=body, headers={**PUBLIC, "ETag": etag}, content_type="application/json"
        )

    return serve
