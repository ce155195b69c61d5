"""The pages in a real browser (docs/pages.md "Tests"): Debian's Chromium, driven by Playwright,
against the three services behind nginx. Each page loads without a console error, its key
elements show at 1280 and 360 px wide, axe-core finds no serious or critical violation, a hostile
note stays inert, an anonymous visitor sees nothing private, and the download page offers each
visitor their own file. Screenshots land in tests-e2e/pages/output/ (kept out of git)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Stack

playwright_sync = pytest.importorskip("playwright.sync_api")

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
AXE = HERE / "node_modules/axe-core/axe.min.js"
OUTPUT = HERE / "output"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTHS = (1280, 360)
HOSTILE_NOTE = (
    "## What's new\n\n* Faster start\n\n<script>alert('note')</script>\n\n"
    "[a link](javascript:alert('link'))\n\n<img src=x onerror=\"alert('img')\">"
)
DESKTOP = [
    {"name": "App-1.2.0-arm64.zip", "size": 2000},
    {"name": "App-1.2.0-x64.zip", "size": 2100},
    {"name": "App-Setup-1.2.0-x64.exe", "size": 3000},
    {"name": "App-Setup-1.2.0-arm64.exe", "size": 3100},
    {"name": "App-1.2.0-x86_64.AppImage", "size": 4000},
]
WORLD = {
    "users": [
        {"name": "bob", "tokens": ["bob-pages-token"]},
        {"name": "carol", "tokens": ["carol-pages-token"]},
    ],
    "orgs": [
        {
            "name": "acme",
            "full_name": "Acme Corporation",
            "description": "Tools for the road runner business",
            "website": "https://acme.example",
            "visibility": "public",
            "members": [
                {"user": "bob", "owner": True, "public": True},
                {"user": "carol", "public": False},
            ],
            "pin_groups": [
                {"name": "Featured", "display_order": 0},
                {"name": "Internal tools", "display_order": 1, "collapsed": True},
                {"name": "Archive", "display_order": 2, "collapsed": True},
            ],
            "pins": [
                {"repo": "app", "group": "Featured", "display_order": 1},
                {"repo": "vault", "group": "Internal tools", "display_order": 2},
                {"repo": "old", "group": "Archive", "display_order": 3},
            ],
        }
    ],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "description": "The Acme desktop app",
            "releases": [
                {"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z", "assets": DESKTOP[:2]},
                {
                    "tag": "v1.2.0",
                    "title": "Acme 1.2",
                    "note": HOSTILE_NOTE,
                    "created_at": "2026-02-01T00:00:00Z",
                    "assets": DESKTOP,
                },
                {
                    "tag": "v1.3.0-beta.1",
                    "prerelease": True,
                    "created_at": "2026-03-01T00:00:00Z",
                    "assets": [{"name": "App-1.3.0-beta.1-x64.zip", "size": 10}],
                },
                {
                    "tag": "v9.9.9-hush",
                    "title": "Unannounced draft",
                    "draft": True,
                    "created_at": "2026-04-01T00:00:00Z",
                },
            ],
        },
        {"owner": "acme", "name": "old", "description": "Retired"},
        {
            "owner": "acme",
            "name": "vault",
            "private": True,
            "description": "Confidential vault",
            "releases": [{"tag": "v7.7.7", "created_at": "2026-01-01T00:00:00Z"}],
        },
    ],
}
# page → (path, a key element that must be visible at every width)
PAGES = {
    "org": ("/acme", "h1:has-text('Acme Corporation')"),
    "repo": ("/acme/app", "a.button.download"),
    "releases": ("/acme/app/releases", "h1:has-text('Releases')"),
    "release": ("/acme/app/releases/tag/v1.2.0", "h1:has-text('Acme 1.2')"),
    "download": ("/acme/app/download", "a.button.download"),
}
# Nothing of these may reach an anonymous visitor, on any page.
PRIVATE_WORDS = ("vault", "Confidential", "carol", "Internal tools", "v9.9.9", "Unannounced")
_ENGINE = "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140 Safari/537.36"
LINUX_UA = f"Mozilla/5.0 (X11; Linux x86_64) {_ENGINE}"
MAC_UA = f"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) {_ENGINE}"
WINDOWS_UA = f"Mozilla/5.0 (Windows NT 10.0; Win64; x64) {_ENGINE}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("chromium is not installed (make pages-tools installs it as root)")
    if not AXE.exists():
        pytest.skip("axe-core is not installed (make pages-tools runs npm ci)")
    with playwright_sync.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _visitor(browser: Any, width: int, platform: str, arch: str, agent: str) -> Any:
    """A page whose visitor is on `platform` (client hints and User-Agent, as Chromium sends
    them for that machine)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    brands = [{"brand": "Chromium", "version": "140"}, {"brand": "Not=A?Brand", "version": "24"}]
    cdp.send(
        "Emulation.setUserAgentOverride",
        {
            "userAgent": agent,
            "userAgentMetadata": {
                "brands": brands,
                "platform": platform,
                "platformVersion": "14.0.0",
                "architecture": arch,
                "model": "",
                "mobile": False,
            },
        },
    )
    return page


def _axe_violations(page: Any) -> list[str]:
    # evaluated through the DevTools protocol: the pages' CSP allows no script element
    page.evaluate(AXE.read_text())
    result = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']}"
        for v in result
        if v["impact"] in {"serious", "critical"}
    ]


def test_pages_load_clean_accessible_and_private_at_both_widths(stack: Stack, browser: Any) -> None:
    OUTPUT.mkdir(exist_ok=True)
    problems: list[str] = []
    for width in WIDTHS:
        page = _visitor(browser, width, "Linux", "x86", LINUX_UA)
        errors: list[str] = []
        dialogs: list[str] = []
        page.on(
            "console",
            lambda m, e=errors: e.append(f"{m.text} {m.location}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
        page.on("dialog", lambda d, seen=dialogs: (seen.append(d.message), d.dismiss()))
        for name, (path, key) in PAGES.items():
            reply = page.goto(stack.base_url.rstrip("/") + path)
            assert reply is not None and reply.status == 200, (name, width)
            assert page.locator(key).first.is_visible(), (name, width, key)
            assert page.title() and page.locator("html").get_attribute("lang") == "en"
            # usable at 360 px: nothing wider than the viewport
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, (name, width, scroll)
            levels = page.evaluate(
                "[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map(h => +h.tagName[1])"
            )
            assert levels[0] == 1 and levels.count(1) == 1, (name, levels)
            assert all(b <= a + 1 for a, b in itertools.pairwise(levels)), (name, levels)
            page.screenshot(path=str(OUTPUT / f"{name}-{width}.png"), full_page=True)
            text = page.content()
            leaked = [word for word in PRIVATE_WORDS if word in text]
            assert not leaked, (name, leaked)
            problems += [f"{name}@{width}: {v}" for v in _axe_violations(page)]
        page.context.close()
        assert errors == [], errors
        assert dialogs == [], dialogs  # the hostile note never ran
    assert problems == [], problems


def test_hostile_note_is_inert_in_the_browser(stack: Stack, browser: Any) -> None:
    page = _visitor(browser, 1280, "Linux", "x86", LINUX_UA)
    page.goto(stack.base_url + "acme/app/releases/tag/v1.2.0")
    note = page.locator(".note")
    assert note.locator("h2").inner_text() == "What's new"  # the markdown is rendered
    assert "<script>alert('note')</script>" in note.inner_text()  # raw HTML shows as text
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("document.querySelectorAll('.note img, [onerror]').length") == 0
    hrefs = page.evaluate("[...document.querySelectorAll('.note a')].map(a => a.href)")
    assert not any(h.startswith("javascript:") for h in hrefs)
    page.context.close()


def test_private_repository_pages_show_nothing_to_anonymous_visitors(
    stack: Stack, browser: Any
) -> None:
    page = _visitor(browser, 1280, "Linux", "x86", LINUX_UA)
    for suffix in ("", "/releases", "/releases/tag/v7.7.7", "/download"):
        reply = page.goto(stack.base_url + "acme/vault" + suffix)
        assert reply is not None and reply.status == 401  # as the API answers (rule 5)
        assert reply.headers["content-type"].startswith("text/html")
        body = page.locator("main").inner_text()
        assert "Confidential" not in body and "v7.7.7" not in body
    draft = page.goto(stack.base_url + "acme/app/releases/tag/v9.9.9-hush")
    assert draft is not None and draft.status == 404
    assert "Unannounced" not in page.content()
    page.context.close()


@pytest.mark.parametrize(
    ("platform", "arch", "agent", "expected"),
    [
        ("macOS", "arm", MAC_UA, "App-1.2.0-arm64.zip"),  # its UA says Intel: the hint decides
        ("Windows", "x86", WINDOWS_UA, "App-Setup-1.2.0-x64.exe"),
    ],
)
def test_download_page_offers_the_visitors_file(
    stack: Stack, browser: Any, platform: str, arch: str, agent: str, expected: str
) -> None:
    page = _visitor(browser, 1280, platform, arch, agent)
    page.goto(stack.base_url + "acme/app/download")
    button = page.locator("a.button.download")
    assert button.is_visible()
    assert button.get_attribute("href").endswith(f"/releases/download/v1.2.0/{expected}")
    others = page.locator("ul.others a").all_inner_texts()
    assert expected not in others and len(others) == len(DESKTOP) - 1
    page.screenshot(path=str(OUTPUT / f"download-{platform.lower()}-{arch}.png"))
    page.context.close()
