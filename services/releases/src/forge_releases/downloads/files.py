"""Answering a download of one asset: the headers every mode shares (Content-Type, ETag = the
SHA-256, Last-Modified, Content-Disposition, caching), `If-None-Match` / `If-Modified-Since` (304),
`Range` (ranges.py: 206, multipart 206, 416), then send.py sends the bytes the way the storage
and deployment allow. A `.zsync` is sent as zsync_control.py rewrites it: the headers, ETag and
ranges are those of the rewritten bytes. A name not found exactly is looked up
case-insensitively, since Squirrel.Windows retries a failed download lower-cased.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import quote

from aiohttp import web
from forge_common.conditional import none_match, not_modified, quoted

from ..access_keys.signed_urls import signed
from ..errors import AssetNotFound
from ..httpcache import cache_headers
from ..models import Asset, Release, RepoRef
from . import zsync_control
from .ranges import ByteRange, Unsatisfiable, parse_ranges
from .send import Download, send

# The stored type is what an uploader declared (or a guess from the name): never trusted to render.
# Only these types, which no browser renders or runs in the page, are sent as stored; anything else
# (text/html, image/svg+xml, application/pdf, ...) is sent as a plain byte stream. With
# `Content-Disposition: attachment` and `X-Content-Type-Options: nosniff` (the middleware) the file
# is saved, never shown.
SAFE_TYPES = frozenset(
    {
        "application/octet-stream",
        "application/zip",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-xz",
        "application/x-bzip2",
        "application/x-7z-compressed",
        "application/zstd",
        "application/x-msdownload",
        "application/x-msi",
        "application/vnd.microsoft.portable-executable",
        "application/x-apple-diskimage",
        "application/vnd.debian.binary-package",
        "application/x-rpm",
        "application/vnd.android.package-archive",
        "application/java-archive",
    }
)


def find_asset(assets: Sequence[Asset], name: str) -> Asset | None:
    """The asset named exactly `name`, else the first (attachment order) equal ignoring case."""
    for asset in assets:
        if asset.name == name:
            return asset
    lowered = name.lower()
    for asset in assets:
        if asset.name.lower() == lowered:
            return asset
    return None


def disposition(name: str) -> str:
    """`filename` for old clients (ASCII, no quotes), `filename*` with the exact name (RFC 6266)."""
    plain = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def served_type(stored: str) -> str:
    """The Content-Type a download is sent with: the stored type when it is in SAFE_TYPES."""
    return stored if stored in SAFE_TYPES else "application/octet-stream"


def _http_date(release_asset: Asset) -> str:
    return format_datetime(release_asset.created_at.replace(microsecond=0), usegmt=True)


def _not_modified_since(request: web.Request, asset: Asset) -> bool:
    header = request.headers.get("If-Modified-Since")
    if not header or "If-None-Match" in request.headers:
        return False  # If-None-Match takes precedence (RFC 9110 §13.1.3)
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:
        return False
    return asset.created_at.replace(microsecond=0) <= since


def _wanted_ranges(
    request: web.Request, etag: str, last_modified: str, size: int
) -> list[ByteRange] | None:
    """The parts to send; None for the whole file. Raises Unsatisfiable."""
    header = request.headers.get("Range")
    if header is None:
        return None
    if_range = request.headers.get("If-Range")
    if if_range is not None and if_range.strip() not in (etag, last_modified):
        return None
    return parse_ranges(header, size)


async def serve_asset(
    request: web.Request, ref: RepoRef, release: Release, name: str, public: bool
) -> web.StreamResponse:
    """The file of `release`'s asset `name` (AssetNotFound when there is none): 200, 206, 302,
    304 or 416; `public` chooses the caching headers. The caller has authorised the request."""
    asset = find_asset(release.assets, name)
    if asset is None:
        raise AssetNotFound()
    body = None
    etag = quoted(asset.sha256)
    if zsync_control.rewritable(asset):
        body = await zsync_control.served_control(request, ref, release, asset)
        asset = replace(asset, size=len(body))
        etag = quoted(hashlib.sha256(body).hexdigest())
        public = public and not signed(request)  # its URLs carry a signature
    last_modified = _http_date(asset)
    headers = {
        **cache_headers(public),
        "ETag": etag,
        "Last-Modified": last_modified,
        "Accept-Ranges": "bytes",
    }
    if none_match(request, etag) or _not_modified_since(request, asset):
        return not_modified(etag, headers)
    try:
        ranges = _wanted_ranges(request, etag, last_modified, asset.size)
    except Unsatisfiable:
        return web.Response(
            status=416, headers={**headers, "Content-Range": f"bytes */{asset.size}"}
        )
    headers["Content-Type"] = served_type(asset.content_type)
    headers["Content-Disposition"] = disposition(asset.name)
    return await send(request, Download(asset, headers, ranges, release.repo_id, body))
