"""Conditional GET: a per-viewer ETag, 304 on a matching If-None-Match.

What a response shows depends on who asks, so the tag covers the viewer as well as the body, and
every answer is `Cache-Control: private` with `Vary: Authorization`: a shared cache must never hand
one viewer's organization profile to another.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from forge_common.auth import Viewer
from forge_common.conditional import etag_of, none_match, not_modified
from forge_common.render import dumps

CACHE_HEADERS = {"Cache-Control": "private", "Vary": "Authorization"}


def etag_for(viewer: Viewer | None, body: bytes) -> str:
    return etag_of(f"viewer:{viewer.id if viewer else 'anonymous'}\n".encode(), body)


def cached_json(
    request: web.Request,
    viewer: Viewer | None,
    data: object,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """200 with the JSON body, or 304 with no body when the client already has this version."""
    return cached_body(request, viewer, dumps(data), headers)


def cached_body(
    request: web.Request,
    viewer: Viewer | None,
    body: bytes,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """`cached_json` for a body already serialized (the overview cache keeps bytes)."""
    etag = etag_for(viewer, body)
    all_headers = {**CACHE_HEADERS, **(headers or {}), "ETag": etag}
    if none_match(request, etag):
        return not_modified(etag, all_headers)
    return web.Response(body=body, headers=all_headers, content_type="application/json")
