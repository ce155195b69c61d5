"""The download page picks the visitor's build with the feeds' matcher (docs/pages.md "Download
page"): the exact architecture, then a universal build, then none, never another
architecture's; from the newest release that has such a build, as the update check would offer.
Also what a visitor reads around it: the "Latest" badge, each file's SHA-256, sizes in the CLI's
binary units, the breadcrumb's links, the tag said once."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from .support import one_repo, rel
from .test_pages import MAC_ARM, MAC_NO_HINTS, _main

INTEL = {**MAC_NO_HINTS, "Sec-CH-UA-Platform": '"macOS"', "Sec-CH-UA-Arch": '"x86"'}


def _button(html: str) -> str | None:
    found = re.search(r'<a class="button download" href="[^"]*/([^"/]+)"', html)
    return found.group(1) if found else None


@pytest.mark.parametrize(
    ("assets", "intel", "apple"),
    [
        (("MyApp-1.2.0-arm64-mac.zip",), None, "MyApp-1.2.0-arm64-mac.zip"),
        # electron-builder leaves x64 unnamed: a nameless build fits a Mac of either kind
        (
            ("MyApp-1.2.0-mac.zip", "MyApp-1.2.0-x64.dmg"),
            "MyApp-1.2.0-x64.dmg",
            "MyApp-1.2.0-mac.zip",
        ),
        (("MyApp-1.2.0-universal.dmg",), "MyApp-1.2.0-universal.dmg", "MyApp-1.2.0-universal.dmg"),
        (
            ("MyApp-1.2.0-arm64.dmg", "MyApp-1.2.0-universal.dmg"),
            "MyApp-1.2.0-universal.dmg",
            "MyApp-1.2.0-arm64.dmg",
        ),
    ],
)
async def test_each_mac_gets_its_own_build_or_a_plain_no(
    make_client: Any, load: Any, assets: tuple[str, ...], intel: str | None, apple: str | None
) -> None:
    await load(one_repo([rel("v1.2.0", 1, *assets)]))
    client = await make_client()
    for visitor, expected, label in ((INTEL, intel, "Intel"), (MAC_ARM, apple, "Apple silicon")):
        html = _main(await (await client.get("/owner/app/download", headers=visitor)).text())
        assert _button(html) == expected, html
        if expected is None:
            assert f"There is no build of app for macOS ({label})" in html


async def test_a_newer_tag_without_a_build_does_not_hide_the_last_one(
    make_client: Any, load: Any
) -> None:
    releases = [
        rel("v1.1.0", 1, "MyApp-1.1.0-arm64-mac.zip", "MyApp Setup 1.1.0.exe"),
        rel("latest-build", 2, "latest.yml", "latest-mac.yml"),
    ]
    await load(one_repo(releases))
    client = await make_client()
    html = _main(await (await client.get("/owner/app/download", headers=MAC_ARM)).text())
    assert _button(html) == "MyApp-1.1.0-arm64-mac.zip"
    assert "v1.1.0" in html and "No build" not in html


async def test_latest_prerelease_is_linked_only_when_there_is_one(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "A-arm64-mac.zip")]))
    client = await make_client()
    html = _main(await (await client.get("/owner/app/download", headers=MAC_ARM)).text())
    assert "Latest prerelease" not in html


async def test_release_pages_show_latest_digests_sizes_and_a_breadcrumb(
    make_client: Any, load: Any
) -> None:
    old = rel("v1.0.0", 1)
    old["assets"] = [{"name": "App-1.0.0-arm64-mac.zip", "content": "x" * 3000}]
    new = rel("v1.1.0", 2, "App-1.1.0-arm64-mac.zip")
    new["title"] = "Spring update"
    await load(one_repo([old, new]))
    client = await make_client()
    html = _main(await (await client.get("/owner/app/releases/tag/v1.0.0")).text())
    sha = hashlib.sha256(b"x" * 3000).hexdigest()
    assert f"SHA-256 <code>{sha}</code>" in html
    assert "2.9 KiB" in html  # the CLI's units
    assert re.search(r'/ <a href="[^"]*/owner/app/releases">releases</a>', html)
    assert "Latest</span>" not in html  # v1.1.0 is the latest
    listing = _main(await (await client.get("/owner/app/releases")).text())
    assert listing.count("Latest</span>") == 1
    assert listing.index("Latest</span>") < listing.index("v1.0.0")
    download = _main(await (await client.get("/owner/app/download", headers=MAC_ARM)).text())
    assert "Spring update · v1.1.0" in download and "(v1.1.0)" not in download
    assert "Latest</span>" in download


@pytest.mark.parametrize(
    ("title", "named"),
    [
        ("MyApp 1.2.0", "MyApp"),
        ("MyApp v1.2.0", "MyApp"),
        ("My App - 1.2.0", "My App"),
        ("v1.2.0", "app"),  # only the version: the repository's name
        ("Autumn update", "app"),  # no version at its end: no product named
    ],
)
async def test_the_download_page_names_the_product_as_its_releases_do(
    make_client: Any, load: Any, title: str, named: str
) -> None:
    await load(one_repo([rel("v1.2.0", 1, "MyApp-1.2.0-arm64-mac.zip", title=title)]))
    client = await make_client()
    html = await (await client.get("/owner/app/download", headers=MAC_ARM)).text()
    assert f"<title>Download {named} · Forge</title>" in html
    assert f"<h1>Download {named}</h1>" in _main(html)
