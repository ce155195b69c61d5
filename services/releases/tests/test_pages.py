"""The repository, releases, release and download pages (docs/pages.md): each answers with the
status the matching API call gives, shows what it shows and no more, renders hostile notes inert,
and the download page picks the visitor's file with the update check's own table."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from forge_testing.waiting import eventually

from .support import CALLERS, REPO_KINDS, auth, one_repo, rel
from .test_cache import add_release

PAGES = {
    "repo": ("/owner/{repo}", "/api/v2/repos/owner/{repo}/releases/latest"),
    "releases": ("/owner/{repo}/releases", "/api/v2/repos/owner/{repo}/releases"),
    "release": ("/owner/{repo}/releases/tag/v1.0.0", "/api/v2/repos/owner/{repo}/releases/v1.0.0"),
    "download": ("/owner/{repo}/download", "/api/v2/repos/owner/{repo}/releases/latest"),
}
MAC_ARM = {
    "User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36",
    "Sec-CH-UA-Platform": '"macOS"',
    "Sec-CH-UA-Arch": '"arm"',
}
MAC_NO_HINTS = {"User-Agent": MAC_ARM["User-Agent"]}
WINDOWS = {"User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"}
LINUX = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"}
PHONE = {"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}
DESKTOP_ASSETS = (
    "App-1.0.0-arm64.zip",
    "App-1.0.0-x64.zip",
    "App-Setup-1.0.0-arm64.exe",
    "App-Setup-1.0.0-x64.exe",
    "App-1.0.0-x86_64.AppImage",
    "App-1.0.0-full.nupkg",
    "RELEASES",
)
HOSTILE = (
    "<script>alert(1)</script>\n\n[click](javascript:alert(2))\n\n"
    '<img src=x onerror="alert(3)">\n\n**bold** and <a href="#" onclick="alert(4)">x</a>'
)


class _Active(HTMLParser):
    """What in a page could run: script elements, event handler attributes, javascript: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "iframe", "object", "embed", "img"}:
            self.found.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag} {name}={value}")


def _active(html: str) -> list[str]:
    parser = _Active()
    parser.feed(html)
    return parser.found


def _main(html: str) -> str:
    return html.split("<main", 1)[1].split("</main>", 1)[0]


@pytest.mark.parametrize("name", sorted(PAGES))
async def test_pages_answer_like_the_api(matrix_client: Any, name: str) -> None:
    """Every caller × every repository kind: the page's status is the API's, always HTML."""
    page, api = PAGES[name]
    for repo in REPO_KINDS:
        for caller in CALLERS:
            got = await matrix_client.get(page.format(repo=repo), headers=auth(caller))
            want = await matrix_client.get(api.format(repo=repo), headers=auth(caller))
            assert got.status == want.status, (repo, caller)
            assert got.headers["Content-Type"].startswith("text/html"), (repo, caller)
            html = await got.text()
            assert "<title>" in html and "<script" not in html
            if got.status != 200:
                # the sign-in link's return address is the path asked for, whatever it names
                html = re.sub(r'redirect_to=[^"]*', "", html)
                assert "v1.0.0" not in html and "App-1.0.0" not in html


async def test_anonymous_pages_show_no_draft_and_mark_prereleases(matrix_client: Any) -> None:
    html = _main(await (await matrix_client.get("/owner/pub/releases")).text())
    assert "v2.0.0" not in html and "Draft" not in html  # a draft never shows
    assert "v0.9.0" not in html  # nor a bare tag
    assert re.search(r"v1.1.0-beta.1</a>\s*<span class=\"badge\">Prerelease", html)
    draft = await matrix_client.get("/owner/pub/releases/tag/v2.0.0")
    assert draft.status == 404 and "v2.0.0" not in _main(await draft.text())
    # like the API: drafts=true only for an administrator
    asked = await matrix_client.get("/owner/pub/releases?drafts=true", headers=auth("stranger"))
    assert "v2.0.0" not in _main(await asked.text())
    admin = await matrix_client.get("/owner/pub/releases?drafts=true", headers=auth("repoadmin"))
    assert "v2.0.0" in _main(await admin.text())
    assert admin.headers["Cache-Control"].startswith("private")


async def test_releases_page_is_paginated_like_the_list(make_client: Any, load: Any) -> None:
    await load(one_repo([rel(f"v1.{i}.0", i) for i in range(5)]))
    client = await make_client()
    first = _main(await (await client.get("/owner/app/releases?limit=2")).text())
    assert re.findall(r">(v1\.\d\.0)</a>", first) == ["v1.4.0", "v1.3.0"]
    assert "page 1 of 3" in first and 'rel="next"' in first and 'rel="prev"' not in first
    second = _main(await (await client.get("/owner/app/releases?limit=2&page=2")).text())
    assert re.findall(r">(v1\.\d\.0)</a>", second) == ["v1.2.0", "v1.1.0"]
    assert 'rel="prev"' in second and "page=3" in second


async def test_hostile_note_is_inert(make_client: Any, load: Any) -> None:
    await load(one_repo([{**rel("v1.0.0", 1, "App-x64.zip"), "note": HOSTILE}]))
    client = await make_client()
    for path in ("/owner/app", "/owner/app/releases", "/owner/app/releases/tag/v1.0.0"):
        reply = await client.get(path)
        html = _main(await reply.text())
        assert reply.status == 200
        assert "<strong>bold</strong>" in html  # markdown is rendered...
        assert _active(html) == [], path  # ...and nothing in it can run
        assert "&lt;script&gt;" in html  # raw HTML in a note is shown as text
        assert "script-src" not in reply.headers["Content-Security-Policy"]
        assert "default-src 'none'" in reply.headers["Content-Security-Policy"]


@pytest.mark.parametrize(
    ("visitor", "platform", "arch"),
    [
        (MAC_ARM, "darwin", "arm64"),
        (MAC_NO_HINTS, "darwin", "x64"),
        (WINDOWS, "windows", "x64"),
        (LINUX, "linux", "x64"),
    ],
)
async def test_download_page_offers_what_the_update_check_would(
    make_client: Any, load: Any, visitor: dict[str, str], platform: str, arch: str
) -> None:
    await load(one_repo([rel("v0.9.0", 1, "Old-x64.zip"), rel("v1.0.0", 2, *DESKTOP_ASSETS)]))
    client = await make_client(wait_cache=True)
    for _ in range(2):  # the second answer comes from the page cache
        reply = await client.get("/owner/app/download", headers=visitor)
        assert reply.status == 200
        assert "Sec-CH-UA-Arch" in reply.headers["Accept-CH"]
        assert "User-Agent" in reply.headers["Vary"]
        html = _main(await reply.text())
        button = re.search(r'<a class="button download" href="([^"]+)"', html)
        assert button is not None
        check = await client.get(
            "/api/v2/repos/owner/app/releases/update",
            params={"version": "0.0.1", "platform": platform, "arch": arch},
        )
        assert button.group(1) == (await check.json())["url"]
        # every other platform's file is listed below
        assert html.count("/releases/download/v1.0.0/") >= 5


async def test_download_page_names_the_expected_files(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 2, *DESKTOP_ASSETS)]))
    client = await make_client()
    mac = _main(await (await client.get("/owner/app/download", headers=MAC_ARM)).text())
    assert re.search(r'class="button download" href="[^"]+/App-1.0.0-arm64.zip"', mac)
    win = _main(await (await client.get("/owner/app/download", headers=WINDOWS)).text())
    assert re.search(r'class="button download" href="[^"]+/App-Setup-1.0.0-x64.exe"', win)
    phone = _main(await (await client.get("/owner/app/download", headers=PHONE)).text())
    assert 'class="button download"' not in phone and "All platforms" in phone


async def test_download_page_channel_and_empty_repository(make_client: Any, load: Any) -> None:
    releases = [
        rel("v1.0.0", 1, "A-x64.zip"),
        rel("v1.1.0-beta.1", 2, "B-x64.zip", prerelease=True),
    ]
    await load(one_repo(releases))
    client = await make_client()
    stable = _main(await (await client.get("/owner/app/download", headers=LINUX)).text())
    assert "A-x64.zip" in stable and "B-x64.zip" not in stable
    beta = await client.get("/owner/app/download?channel=beta", headers=LINUX)
    assert "B-x64.zip" in _main(await beta.text())


async def test_download_page_without_releases_is_a_404_page(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client()
    reply = await client.get("/owner/app/download")
    assert reply.status == 404 and "No releases found" in await reply.text()
    repo = await client.get("/owner/app")
    assert repo.status == 200 and "No releases yet" in await repo.text()


async def test_kept_download_page_shows_a_new_release_at_once(
    make_client: Any, load: Any, db: Any
) -> None:
    """A download page kept rendered goes with the cached candidates it came from."""
    await load(one_repo([rel("v1.0.0", 1, "App-1.0.0-arm64.zip")]))
    client = await make_client(wait_cache=True)

    async def offers(name: str) -> bool:
        html = await (await client.get("/owner/app/download", headers=MAC_ARM)).text()
        return f"/{name}" in _main(html)

    assert await offers("App-1.0.0-arm64.zip") and await offers("App-1.0.0-arm64.zip")
    await add_release(db, "v1.1.0", "App-1.1.0-arm64.zip")
    await eventually(lambda: offers("App-1.1.0-arm64.zip"))


async def test_release_page_of_a_tag_with_a_slash(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("release/2.0", 1, "App-x64.zip")]))
    client = await make_client()
    listed = _main(await (await client.get("/owner/app/releases")).text())
    link = re.search(r'<a href="http://[^/]+(/owner/app/releases/tag/[^"]+)">release/2.0<', listed)
    assert link is not None and link.group(1).endswith("/release%2F2.0")
    page = await client.get(link.group(1))
    assert page.status == 200 and "App-x64.zip" in await page.text()


async def test_kept_download_page_revalidates(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, *DESKTOP_ASSETS)]))
    client = await make_client(wait_cache=True)
    first = await client.get("/owner/app/download", headers=WINDOWS)
    kept = await client.get("/owner/app/download", headers=WINDOWS)
    assert await kept.read() == await first.read()
    assert kept.headers["Content-Type"].startswith("text/html")
    assert kept.headers["Cache-Control"] == "public, no-cache"
    again = await client.get(
        "/owner/app/download", headers={**WINDOWS, "If-None-Match": first.headers["ETag"]}
    )
    assert again.status == 304
    # a signed-in visitor's page is rendered for them (never kept), with the same file offered
    signed = await client.get("/owner/app/download", headers={**WINDOWS, **auth("owner")})
    assert await signed.read() == await first.read()
