"""A browser for tests of pages and forms: its own cookie jar, the `Origin` a browser sends on a
form post, and the CSRF token read from the page the form is on, as a real browser would submit
it (the real-browser tests are in tests-e2e/pages).

    async with Browser(client.make_url("/"), origin="http://forge.test") as browser:
        await browser.sign_in("olive", "olive-password")
        status, html = await browser.get("/user/settings/applications")
        reply = await browser.submit("/user/settings/applications", {"name": "ci"}, page=html)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import aiohttp
from yarl import URL

_CSRF = re.compile(r'name="_csrf" value="([^"]*)"')


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a page ('' when the page has none)."""
    found = _CSRF.search(html)
    return found.group(1) if found else ""


class Browser:
    def __init__(self, base: URL, *, origin: str | None = None) -> None:
        self.base = base
        self.origin = origin if origin is not None else str(base.origin())
        self.session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.session.close()

    def url(self, path: str) -> URL:
        return self.base.join(URL(path.lstrip("/"), encoded=True))

    async def get(self, path: str, **kw: Any) -> tuple[int, str]:
        async with self.session.get(self.url(path), allow_redirects=False, **kw) as reply:
            return reply.status, await reply.text()

    async def post(
        self,
        path: str,
        data: Mapping[str, Any],
        *,
        origin: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> aiohttp.ClientResponse:
        """A form post as a browser on this site sends it (its Origin); the reply, read."""
        sent = {"Origin": origin if origin is not None else self.origin, **(headers or {})}
        async with self.session.post(
            self.url(path), data=dict(data), headers=sent, allow_redirects=False
        ) as reply:
            await reply.read()
            return reply

    async def submit(
        self, path: str, data: Mapping[str, Any], *, page: str, **kw: Any
    ) -> aiohttp.ClientResponse:
        """Post `data` with the CSRF token of `page` (the page the form is on)."""
        return await self.post(path, {"_csrf": csrf_of(page), **data}, **kw)

    async def sign_in(
        self, name: str, password: str, redirect_to: str = ""
    ) -> aiohttp.ClientResponse:
        _, html = await self.get("/user/login")
        data = {"user_name": name, "password": password}
        if redirect_to:
            data["redirect_to"] = redirect_to
        return await self.submit("/user/login", data, page=html)

    def cookie(self, name: str) -> str | None:
        for morsel in self.session.cookie_jar:
            if morsel.key == name:
                return morsel.value
        return None
