"""Conditional GET for every service: strong ETags and `If-None-Match` answered with 304.

The header is read through aiohttp's parser (`request.if_none_match`), so quoting, weak tags and
lists follow RFC 9110 in one place instead of one hand-written split per service.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from aiohttp import web
from aiohttp.helpers import ETAG_ANY


def etag_of(*parts: bytes) -> str:
    """The strong ETag of every service: a BLAKE2b digest of the bytes sent (and of what else the
    answer depends on, as further `parts`: the viewer of a per-viewer answer)."""
    digest = hashlib.blake2b(digest_size=12)
    for part in parts:
        digest.update(part)
    return quoted(digest.hexdigest())


def quoted(digest: str) -> str:
    """The strong ETag header value for an opaque `digest` (ASCII letters and digits)."""
    return f'"{digest}"'


def none_match(request: web.BaseRequest, etag: str) -> bool:
    """True when `If-None-Match` is `*` or lists `etag` (weak comparison, RFC 9110 §13.1.2).

    `etag` is the header form, quotes included, as `quoted()` makes it.
    """
    listed = request.if_none_match
    if not listed:
        return False
    value = etag.removeprefix("W/").strip('"')
    return any(tag.value == ETAG_ANY or tag.value == value for tag in listed)


def not_modified(etag: str, headers: Mapping[str, str]) -> web.Response:
    """304 with no body, carrying the headers the full answer would have (RFC 9110 §15.4.5)."""
    return web.Response(status=304, headers={**headers, "ETag": etag})
