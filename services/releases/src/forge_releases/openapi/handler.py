"""GET /api/v2/openapi.json: the document of document.py, rendered once (at the first request)
and served with an ETag; `document_handler` serves the compat APIs' documents the same way."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from aiohttp import web

from ..httpcache import PUBLIC, etag_of, none_match, not_modified
from .document import render

Handler = Callable[[web.Request], Awaitable[web.Response]]


def document_handler(render_document: Callable[[], bytes]) -> Handler:
    """A handler serving the bytes `render_document` returns, rendered at the first request."""

    @functools.cache
    def rendered() -> tuple[bytes, str]:
        body = render_document()
        return body, etag_of(body)

    async def serve(request: web.Request) -> web.Response:
        body, etag = rendered()
        if none_match(request, etag):
            return not_modified(etag, PUBLIC)
        return web.Response(
            body=body, headers={**PUBLIC, "ETag": etag}, content_type="application/json"
        )

    return serve


serve = document_handler(render)
