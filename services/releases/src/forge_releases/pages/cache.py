"""Rendered download pages, kept with the update check's cached candidates (read/cache.py).

A page is stored against the `RepoReleases` object it was rendered from: the release cache drops
that object when the repository's releases change, and a page whose object is no longer the
cached one is never served, so a new release shows at once. Only pages every anonymous visitor
of the same platform gets alike are kept (the download page shows no download counts). A kept
page is the exact bytes and headers sent, like the update check's prepared answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import hdrs, web
from forge_common.conditional import none_match

from ..read.cache import RepoReleases

# (repository id, raw query string, the visitor's "platform-arch" or "")
PageKey = tuple[int, str, str]


@dataclass(frozen=True, slots=True)
class KeptPage:
    body: bytes
    headers: dict[str, str]  # Content-Type and ETag included

    def respond(self, request: web.Request) -> web.Response:
        etag = self.headers["ETag"]
        if hdrs.IF_NONE_MATCH in request.headers and none_match(request, etag):
            headers = {k: v for k, v in self.headers.items() if k != "Content-Type"}
            return web.Response(status=304, headers=headers)
        return web.Response(body=self.body, headers=self.headers)


class PageCache:
    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._pages: dict[PageKey, tuple[RepoReleases, KeptPage]] = {}

    def get(self, key: PageKey, source: RepoReleases) -> KeptPage | None:
        found = self._pages.get(key)
        return found[1] if found is not None and found[0] is source else None

    def put(self, key: PageKey, source: RepoReleases, page: KeptPage) -> None:
        if len(self._pages) >= self.limit:
            self._pages.clear()  # rare; cheaper than tracking use
        self._pages[key] = (source, page)


PAGE_CACHE = web.AppKey("forge_releases_page_cache", PageCache)
