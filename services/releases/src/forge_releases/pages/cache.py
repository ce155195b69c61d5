"""Rendered download pages, kept with the update check's cached candidates (read/cache.py).

A page is stored against the `RepoReleases` object it was rendered from: the release cache drops
that object when the repository's releases change, and a page whose object is no longer the
cached one is never served, so a new release shows at once. Only pages every anonymous visitor
of the same platform gets alike are kept (the download page shows no download counts).
"""

from __future__ import annotations

from aiohttp import web

from ..read.cache import RepoReleases

PageKey = tuple[int, str, str]  # (repository id, channel, visitor's platform-arch or "")


class PageCache:
    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._pages: dict[PageKey, tuple[RepoReleases, bytes]] = {}

    def get(self, key: PageKey, source: RepoReleases) -> bytes | None:
        found = self._pages.get(key)
        return found[1] if found is not None and found[0] is source else None

    def put(self, key: PageKey, source: RepoReleases, body: bytes) -> None:
        if len(self._pages) >= self.limit:
            self._pages.clear()  # rare; cheaper than tracking use
        self._pages[key] = (source, body)


PAGE_CACHE = web.AppKey("forge_releases_page_cache", PageCache)
