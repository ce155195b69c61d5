"""Conditional GET: a per-viewer ETag, 304 on a matching If-None-Match.

What a response shows depends on who asks, so the tag covers the viewer as well as the body, and
every answer is `Cache-Control: private` with `Vary: Authorization`: a shared cache must never hand
one viewer's organization profile to another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from aiohttp import web
from forge_common.auth import Viewer
from forge_common.render import dumps

CACHE_HEADERS = {"Cache-Control": "private", "Vary": "Authorization"}


def etag_for(viewer: Viewer | None, body: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(f"viewer:{viewer.id if viewer else 'anonymous'}\n".encode())
    digest.update(body)
    return f'"{digest.hexdigest()[:40]}"'


def _matches(header: str, etag: str) -> bool:
    if header.strip() == "*":
        return True
    # weak comparison (RFC 9110 §13.1.2): W/"x" matches "x"
    candidates = {part.strip().removeprefix("W/") for part in header.split(",")}
    return etag in candidates


def cached_json(
    request: web.Request,
    viewer: Viewer | None,
    data: object,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """200 with the JSON body, or 304 with no body when the client already has this version."""
    body = dumps(data)
    etag = etag_for(viewer, body)
    all_headers = {**CACHE_HEADERS, **(headers or {}), "ETag": etag}
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None and _matches(if_none_match, etag):
        return web.Response(status=304, headers=all_headers)
    return web.Response(body=body, headers=all_headers, content_type="application/json")
