"""GET /api/v2/openapi.json: the document of document.py, rendered once (at the first request)
and served with an ETag."""

from __future__ import annotations

import functools

from aiohttp import web

from ..httpcache import PUBLIC, etag_of, none_match, not_modified
from .document import render


@functools.cache
def _rendered() -> tuple[bytes, str]:
    body = render()
    return body, etag_of(body)


async def serve(request: web.Request) -> web.Response:
    body, etag = _rendered()
    if none_match(request, etag):
        return not_modified(etag, PUBLIC)
    return web.Response(
        body=body, headers={**PUBLIC, "ETag": etag}, content_type="application/json"
    )
