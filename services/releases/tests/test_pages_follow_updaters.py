"""Pages follow the updaters (docs/pages.md "Latest on the pages"): a tag no updater can compare
(a nightly `latest-build` published after v1.1.0) is never a page's "Latest" nor its download,
while the release APIs keep the spec's latest rule; the console warns about such a tag as the CLI
does. Download counts (docs/releases.md "Downloads"): one count on every page and API,
never going back, also across a flush of the batched counter."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from forge_common.keys import DB_POOL
from forge_releases.keys import DOWNLOAD_COUNTER

from .console_support import signed_in
from .publish_support import TOKENS as PUBLISH_TOKENS
from .publish_support import publish_world
from .support import one_repo, rel
from .test_pages import LINUX, WINDOWS, _main

NIGHTLY = [
    rel("v1.1.0", 1, "MyApp Setup 1.1.0.exe", "MyApp-1.1.0-arm64-mac.zip"),
    rel("latest-build", 2, "MyApp Setup nightly.exe", "MyApp-nightly-arm64-mac.zip"),
]


def _latest_badge_of(html: str) -> list[str]:
    """The titles carrying the "Latest" badge."""
    return re.findall(r'>([^<>]+)</a>\s*<span class="badge">Latest</span>', html)


def _button(html: str) -> str | None:
    found = re.search(r'<a class="button download" href="[^"]*/([^"/]+)"', html)
    return found.group(1) if found else None


async def test_a_nightly_tag_is_never_the_pages_latest_nor_their_download(
    make_client: Any, load: Any
) -> None:
    await load(one_repo(NIGHTLY))
    client = await make_client()
    repo = _main(await (await client.get("/owner/app", headers=WINDOWS)).text())
    assert _button(repo) == "MyApp%20Setup%201.1.0.exe" and "latest-build" not in repo
    assert _latest_badge_of(repo) == ["v1.1.0"]
    download = _main(await (await client.get("/owner/app/download", headers=WINDOWS)).text())
    assert _button(download) == "MyApp%20Setup%201.1.0.exe"
    assert "Latest</span>" in download and "latest-build" not in download
    listing = _main(await (await client.get("/owner/app/releases")).text())
    assert _latest_badge_of(listing) == ["v1.1.0"] and "latest-build" in listing
    nightly = _main(await (await client.get("/owner/app/releases/tag/latest-build")).text())
    assert 'badge">Latest' not in nightly
    start = await (await client.get("/")).text()
    assert "Latest release: <a" in start and ">v1.1.0</a>" in start
    assert ">latest-build</a>" not in start
    # the release APIs keep the spec's latest rule: the newest published release
    api = await (await client.get("/api/v2/repos/owner/app/releases/latest")).json()
    assert api["tag_name"] == "latest-build"


async def test_the_pages_latest_is_the_highest_version_an_updater_is_offered(
    make_client: Any, load: Any
) -> None:
    """A fix of an older line published last (v1.4.1 after v2.0.0) is not what an updater on
    v1.0.0 is offered, so it is not the pages' latest either."""
    releases = [
        rel("v2.0.0", 1, "MyApp Setup 2.0.0.exe"),
        rel("v1.4.1", 2, "MyApp Setup 1.4.1.exe"),
    ]
    await load(one_repo(releases))
    client = await make_client()
    update = await client.get(
        "/api/v2/repos/owner/app/releases/update",
        params={"version": "1.0.0", "platform": "windows", "arch": "x64"},
    )
    assert (await update.json())["name"] == "v2.0.0"
    repo = _main(await (await client.get("/owner/app", headers=WINDOWS)).text())
    assert _button(repo) == "MyApp%20Setup%202.0.0.exe"
    download = _main(await (await client.get("/owner/app/download", headers=WINDOWS)).text())
    assert _button(download) == "MyApp%20Setup%202.0.0.exe"


async def test_the_console_warns_about_a_tag_no_updater_compares(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    await load(publish_world())
    client = await make_client()
    async with await signed_in(client, db, settings, "writer") as browser:
        _, html = await browser.get("/owner/pub/releases/new")
        data = {"tag_name": "latest-build", "name": "", "body": "", "action": "draft"}
        created = await browser.submit("/owner/pub/releases/new", data, page=html)
        assert created.status == 303
        _, edit = await browser.get(created.headers["Location"])
        assert "the tag latest-build is not a semantic version" in edit
        assert 'id="tag-warning"' in edit
        _, versioned = await browser.get("/owner/pub/releases/edit/v1.0.0")
        assert 'id="tag-warning"' not in versioned


class _HeldPool:
    """The real pool, whose writes wait for `open`: a flush caught between taking its batch and
    committing it."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.open = asyncio.Event()
        self.waiting = asyncio.Event()

    async def execute(self, *args: Any) -> Any:
        self.waiting.set()
        await self.open.wait()
        return await self.pool.execute(*args)


def _count_on(html: str, name: str) -> int:
    found = re.search(rf">{re.escape(name)}</a>.*?<td class=\"num\">(\d+)</td></tr>", html, re.S)
    assert found is not None, html
    return int(found.group(1))


async def _counts(client: Any) -> dict[str, int]:
    repo = await (await client.get("/owner/app")).text()
    listing = await (await client.get("/owner/app/releases")).text()
    api = await (await client.get("/api/v2/repos/owner/app/releases/latest")).json()
    return {
        "repository page": _count_on(repo, "App-x64.zip"),
        "releases page": _count_on(listing, "App-x64.zip"),
        "API": api["assets"][0]["download_count"],
    }


async def test_one_download_count_everywhere_before_and_after_a_flush(
    make_client: Any, load: Any
) -> None:
    world = one_repo([{"tag": "v1.0.0", "assets": [{"name": "App-x64.zip", "content": "x"}]}])
    await load(world)
    client = await make_client()
    assert set((await _counts(client)).values()) == {0}  # the candidates are now kept
    download = "/owner/app/releases/download/v1.0.0/App-x64.zip"
    seen = []
    for _ in range(2):
        assert await (await client.get(download)).read() == b"x"
        seen.append(await _counts(client))
        await client.app[DOWNLOAD_COUNTER].flush(client.app[DB_POOL])
        seen.append(await _counts(client))
    assert [set(counts.values()) for counts in seen] == [{1}, {1}, {2}, {2}], seen


async def test_a_page_read_during_a_flush_neither_dips_nor_counts_twice(
    make_client: Any, load: Any
) -> None:
    world = one_repo([{"tag": "v1.0.0", "assets": [{"name": "App-x64.zip", "content": "x"}]}])
    await load(world)
    client = await make_client()
    await (await client.get("/owner/app/releases/download/v1.0.0/App-x64.zip")).read()
    held = _HeldPool(client.app[DB_POOL])
    flush = asyncio.create_task(client.app[DOWNLOAD_COUNTER].flush(held))
    await held.waiting.wait()  # the batch is taken, not yet stored
    page = asyncio.create_task(_counts(client))
    # the page either answers while the write is held or waits for it; it is given a second
    # to do the first (what the old code did, showing 0), and must say 1 whichever it does
    await asyncio.wait({page}, timeout=1.0)
    held.open.set()
    await flush
    assert set((await page).values()) == {1}, await page
    assert set((await _counts(client)).values()) == {1}


async def test_drafts_are_listed_to_whoever_may_edit_them(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    """A publisher who is not an administrator sees the repository's drafts on the releases
    page, with a Draft badge and a link to edit each, without asking `?drafts=true`; a reader
    does not; the list API keeps list rule 4 (drafts for administrators who ask)."""
    world = publish_world()
    world["repos"][0]["releases"].append(
        {"tag": "v2.0.0", "draft": True, "created_at": "2026-02-01T00:00:00Z"}
    )
    await load(world)
    client = await make_client()
    for name, sees in (("writer", True), ("repoadmin", True), ("reader", False)):
        async with await signed_in(client, db, settings, name) as browser:
            _, html = await browser.get("/owner/pub/releases")
            html = _main(html)
            assert ("v2.0.0" in html) is sees, name
            if sees:
                assert re.search(r'v2\.0\.0</a>\s*<span class="badge">Draft</span>', html)
                assert 'href="/owner/pub/releases/edit/v2.0.0">Edit draft' in html
            _, without = await browser.get("/owner/pub/releases?drafts=false")
            assert "v2.0.0" not in _main(without)
    api = await client.get(
        "/api/v2/repos/owner/pub/releases",
        headers={"Authorization": f"token {PUBLISH_TOKENS['writer']}"},
    )
    assert "v2.0.0" not in [r["tag_name"] for r in await api.json()]


async def test_the_repository_page_links_what_its_visitor_may_use(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    await load(publish_world())
    client = await make_client()
    expected = {
        "anonymous": set(),
        "reader": set(),
        "writer": {"/releases/new", "/insights"},
        "repoadmin": {"/releases/new", "/insights", "/settings", "/audit"},
    }
    for name, links in expected.items():
        async with await signed_in(client, db, settings, name) as browser:
            _, html = await browser.get("/owner/pub")
            html = _main(html)
            assert 'href="http' in html and '/owner/pub/releases">Releases</a>' in html
            shown = set(re.findall(r'class="console-link" href="[^"]*/owner/pub(/[a-z/]+)"', html))
            assert shown == links, (name, shown)


async def test_an_unnamed_windows_installer_is_listed_once_as_the_x64_build(
    make_client: Any, load: Any
) -> None:
    """electron-builder leaves x64 unnamed: `MyApp Setup 1.1.0.exe` is the x64 installer, not
    also a "Windows (ARM)" one; a named arm64 build is listed as such."""
    world = one_repo([rel("v1.1.0", 1, "MyApp Setup 1.1.0.exe", "MyApp-1.1.0.AppImage")])
    named = [rel("v1.2.0", 2, "MyApp-1.2.0-x64.exe", "MyApp-1.2.0-arm64.exe")]
    world["repos"].append({"owner": "owner", "name": "named", "releases": named})
    await load(world)
    client = await make_client()
    html = _main(await (await client.get("/owner/app/download", headers=LINUX)).text())
    assert "Windows (x64): <a" in html and "Windows (ARM)" not in html
    assert html.count("MyApp%20Setup%201.1.0.exe") == 1
    html = _main(await (await client.get("/owner/named/download", headers=LINUX)).text())
    assert "Windows (x64): <a" in html and "Windows (ARM): <a" in html


async def test_sizes_are_in_one_unit_system_on_pages_and_in_the_console(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    world = publish_world()
    world["repos"][0]["releases"][0]["assets"] = [{"name": "App-x64.zip", "size": 22_334_000}]
    await load(world)
    client = await make_client()
    page = _main(await (await client.get("/owner/pub/releases/tag/v1.0.0")).text())
    assert "21.3 MiB" in page
    async with await signed_in(client, db, settings, "writer") as browser:
        _, console = await browser.get("/owner/pub/releases/edit/v1.0.0")
    assert "21.3 MiB" in console and " MB" not in console and " GB" not in console
    assert re.search(r"up to \d+\.\d [KMG]iB", console), console


async def test_the_linked_insights_open_for_a_signed_in_publisher(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    """The page the repository page now links, before anything was counted: every chart empty,
    not a 500 (the uptake chart divided by the checks of days it had none of)."""
    await load(publish_world())
    client = await make_client()
    async with await signed_in(client, db, settings, "writer") as browser:
        status, html = await browser.get("/owner/pub/insights")
    assert status == 200 and "<h1>Insights</h1>" in html, html[:500]
