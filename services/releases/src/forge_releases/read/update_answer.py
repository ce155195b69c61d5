"""The update check's answer, built once down to the exact bytes and headers sent, so the cache
(cache.py) keeps it and serves a repeated check without recomputing (docs/releases.md "Update
check rules" 8-9 give the body).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import hdrs, web
from forge_common.conditional import etag_of, none_match
from forge_common.render import dumps, rfc3339

from ..httpcache import MICRO_CACHE_UNTIL, cache_headers, micro_cache_until
from ..models import Asset, Release
from ..urls import download_url
from .render import UrlMap, unchanged
from .update import WINDOWS_PLATFORMS, UpdateQuery, decide_update, windows_urls


@dataclass(frozen=True, slots=True)
class Answer:
    """What the update check (or another read, read/handlers.py) sends: 204 (body empty) or 200
    with these exact bytes, with the headers for public and for private data prepared once;
    `headers` are added to both (X-Total-Count, Link)."""

    status: int
    body: bytes = b""
    etag: str = ""
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    public_headers: dict[str, str] = field(init=False)
    private_headers: dict[str, str] = field(init=False)
    # the public headers with X-Accel-Expires for the second in [0], remade once a second: a
    # copy per answer would cost the update check more than the cache saves
    _this_second: list[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        extra = {**self.headers}
        if self.body:
            extra.update({"ETag": self.etag, "Content-Type": self.content_type})
        object.__setattr__(self, "public_headers", {**cache_headers(True), **extra})
        object.__setattr__(self, "private_headers", {**cache_headers(False), **extra})
        object.__setattr__(self, "_this_second", [0, self.public_headers])

    def respond(self, request: web.BaseRequest, public: bool) -> web.Response:
        headers = self.public_headers if public else self.private_headers
        # the header test first: the hot path never parses an absent If-None-Match
        if self.etag and hdrs.IF_NONE_MATCH in request.headers and none_match(request, self.etag):
            return web.Response(
                status=304, headers={k: v for k, v in headers.items() if k != "Content-Type"}
            )
        if public:  # what nginx's micro-cache may keep: until this second ends
            headers = self._kept_until_this_second_ends()
        return web.Response(status=self.status, body=self.body or None, headers=headers)

    def _kept_until_this_second_ends(self) -> dict[str, str]:
        """The public headers with `X-Accel-Expires` (httpcache.micro_cache_until) for now."""
        now = int(time.time())
        if self._this_second[0] != now:
            headers = {**self.public_headers, MICRO_CACHE_UNTIL: micro_cache_until(now)}
            self._this_second[:] = [now, headers]
        kept: dict[str, str] = self._this_second[1]
        return kept


NO_UPDATE = Answer(204)


def update_body(
    app_url: str,
    owner: str,
    repo: str,
    release: Release,
    asset: Asset,
    platform: str,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    """Rules 8-9: the AppUpdateResponse; `mandatory` and empty platform members are omitted.
    Every URL goes through `url_for` (signed for update keys: access_keys/signed_urls.py)."""

    def url(name: str) -> str:
        return url_for(download_url(app_url, owner, repo, release.tag, name))

    info: dict[str, Any] = {}
    if platform in WINDOWS_PLATFORMS:
        releases_file, nupkg = windows_urls(release.assets)
        if releases_file is not None:
            info["releases_url"] = url(releases_file.name)
        if nupkg is not None:
            info["nupkg_url"] = url(nupkg.name)
    if asset.size:
        info["size"] = asset.size
    return {
        "url": url(asset.name),
        "name": release.tag,
        "notes": release.note,
        "pub_date": rfc3339(release.created_at),
        "platform": info,
    }


def prepare_answer(
    app_url: str,
    owner: str,
    repo: str,
    stable: Sequence[Release],
    everything: Sequence[Release],
    query: UpdateQuery,
    url_for: UrlMap = unchanged,
) -> Answer:
    """The whole check, down to the bytes sent. Raises BadVersion."""
    found = decide_update(stable, everything, query)
    if found is None:
        return NO_UPDATE
    release, asset = found
    body = dumps(update_body(app_url, owner, repo, release, asset, query.platform, url_for))
    return Answer(200, body, etag_of(body))
