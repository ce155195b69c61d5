"""GET /api/v2/openapi.json: the committed OpenAPI 3.1 document of this API (openapi_doc.py)."""

from __future__ import annotations

from importlib import resources

from aiohttp import web

from .httpcache import etag_of, none_match, not_modified

_DOCUMENT = resources.files(__package__).joinpath("openapi.json").read_bytes()
_ETAG = etag_of(_DOCUMENT)
_HEADERS = {"Cache-Control": "public, no-cache"}


async def document(request: web.Request) -> web.Response:
    if none_match(request, _ETAG):
        return not_modified(_ETAG, _HEADERS)
    return web.Response(
        body=_DOCUMENT, headers={**_HEADERS, "ETag": _ETAG}, content_type="application/json"
    )
