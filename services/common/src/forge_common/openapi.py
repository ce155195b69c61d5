"""What every service's OpenAPI 3.1 document shares: the envelope (version, info, servers and the
one way callers authenticate, docs/http.md "Authentication"), the small builders each document's
paths are written with, and the handler that serves a rendered document with an ETag. Each service
supplies its own paths, schemas and wording."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from aiohttp import web

from .conditional import etag_of, none_match, not_modified

JSON = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.Response]]

TOKEN_SECURITY = {
    "token": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "`token <t>` or `Bearer <t>`; a token acts within its scopes",
    },
    "basic": {
        "type": "http",
        "scheme": "basic",
        "description": "a user's name and password (every right of the user), or a token as "
        "the password",
    },
}
# A document is the same for every caller: shared caches may keep it, revalidating by ETag.
PUBLIC = {"Cache-Control": "public, no-cache"}


def document(
    *,
    title: str,
    version: str,
    server: str,
    schemas: Mapping[str, Any],
    paths: Mapping[str, Any],
    description: str | None = None,
) -> JSON:
    """An OpenAPI document in which every operation may be called anonymously or with a token."""
    info: JSON = {"title": title, "version": version}
    if description is not None:
        info["description"] = description
    return {
        "openapi": "3.1.0",
        "info": info,
        "servers": [{"url": server}],
        "components": {"securitySchemes": TOKEN_SECURITY, "schemas": schemas},
        "security": [{}, {"token": []}, {"basic": []}],
        "paths": paths,
    }


def ref(name: str) -> JSON:
    """A reference to the document's schema `name`."""
    return {"$ref": f"#/components/schemas/{name}"}


def object_schema(props: Mapping[str, Any], *, optional: tuple[str, ...] = ()) -> JSON:
    """A closed object: these properties, every one required but `optional`, no others."""
    return {
        "type": "object",
        "properties": props,
        "required": [k for k in props if k not in optional],
        "additionalProperties": False,
    }


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


def error_responses(
    statuses: Iterable[str],
    descriptions: Mapping[str, str],
    not_modified_headers: Mapping[str, Any],
) -> JSON:
    """A response for each status, in order: 304 with no body (its cache headers), each other one
    with the error body; `descriptions` words each status for this service."""
    return {
        status: {"description": descriptions[status], "headers": not_modified_headers}
        if status == "304"
        else error(descriptions[status])
        for status in sorted(set(statuses))
    }


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
