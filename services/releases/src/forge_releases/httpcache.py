"""HTTP caching headers: ETag, Cache-Control and conditional requests.

Data anyone may read is `public`; anything that depends on who asks (a private repository, drafts
shown to an admin) is `private` with `Vary: Authorization`, so a shared cache never hands one
caller's answer to another. `no-cache` makes caches revalidate (cheap with the ETag), so a new
release is seen at once: stale update caches are what users of other servers complain about.
"""

from __future__ import annotations

import hashlib

from aiohttp import web

PUBLIC = {"Cache-Control": "public, no-cache"}
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}


def cache_headers(public: bool) -> dict[str, str]:
    return dict(PUBLIC if public else PRIVATE)


def etag_of(body: bytes) -> str:
    """A strong ETag derived from the bytes sent."""
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def none_match(request: web.Request, etag: str) -> bool:
    """True when `If-None-Match` lists `etag` (weak comparison, RFC 9110 §13.1.2) or is `*`."""
    header = request.headers.get("If-None-Match")
    if not header:
        return False
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False


def not_modified(etag: str, headers: dict[str, str]) -> web.Response:
    return web.Response(status=304, headers={**headers, "ETag": etag})
