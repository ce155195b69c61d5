"""The release console in a real browser (docs/console.md "Tests"): Debian's Chromium, driven by
Playwright, against the three services behind nginx. A publisher signs in, creates an update key
and pastes its feed URLs, creates a draft, uploads two 20 MiB files at once and sees each
progress bar advance, publishes and the update check offers the release at once; raises the
rollout from 20 to 100 and electron-updater's staged decision follows; pulls the release back to
draft and the feeds stop offering it. An organization owner reorders pins and the overview API
shows the new order. A reader and a stranger see no console link and get 403/404 on every console
URL. axe-core finds no serious or critical violation on any console page at 1280 and 360 px;
screenshots land in tests-e2e/pages/output/."""

from __future__ import annotations

import html
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ..clients import conftest as clients
from ..clients.conftest import run_node  # noqa: F401 (the fixture, used through `node`)
from ..conftest import Stack
from .test_pages_browser import OUTPUT, WIDTHS, _axe_violations, browser

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = pytest.mark.full

__all__ = ["browser"]  # the fixture, shared (test_pages_browser.py launches Chromium)

MIB = 1024 * 1024
PASSWORDS = {
    "wes": "wes-publisher-pass",
    "rita": "rita-reader-pass",
    "stan": "stan-stranger-pass",
    "olga": "olga-owner-pass",
}
WORLD = {
    "users": [
        {"name": name, "password": password, "tokens": [f"{name}-console-token"]}
        for name, password in PASSWORDS.items()
    ],
    "orgs": [
        {
            "name": "acme",
            "full_name": "Acme Corporation",
            "visibility": "public",
            "members": [{"user": "olga", "owner": True, "public": True}],
            "pins": [
                {"repo": "desk", "display_order": 0},
                {"repo": "tools", "display_order": 1},
                {"repo": "site", "display_order": 2},
            ],
        }
    ],
    "repos": [
        {
            "owner": "acme",
            "name": "desk",
            "private": True,
            "description": "The desk app",
            "collaborators": [
                {"user": "wes", "permission": "admin"},
                {"user": "rita", "permission": "read"},
            ],
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [
                        {"name": "Desk-1.0.0.AppImage", "content": "one"},
                        {"name": "Desk-1.0.0-arm64-mac.zip", "content": "one-mac"},
                    ],
                }
            ],
        },
        {"owner": "acme", "name": "tools"},
        {"owner": "acme", "name": "site"},
    ],
}
DESK = "acme/desk"
CONSOLE_URLS = (
    "releases/new",
    "releases/edit/v1.0.0",
    "releases/edit/v1.0.0/unpublish",
    "releases/edit/v1.0.0/withdraw",
    "settings",
    "settings/update-keys",
    "settings/tauri-key",
)
# electron-updater puts an install at (last 4 bytes of its staging id) / 0xffffffff
INSIDE = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a00000001"  # ~0.0: inside 20%
OUTSIDE = "3f2b8c1e-4d5a-4b6c-8d7e-9f0affffffff"  # 1.0: outside until 100%


@pytest.fixture
def node(request: pytest.FixtureRequest) -> clients.RunNode:
    """tests-e2e/clients' scripts (electron-updater) run in Node.js."""
    runner: clients.RunNode = request.getfixturevalue("run_node")
    return runner


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("console-files")
    made = []
    for index, name in enumerate(("Desk-2.0.0.AppImage", "Desk-2.0.0-arm64-mac.zip")):
        path = folder / name
        block = bytes([65 + index]) * MIB
        with path.open("wb") as out:
            for _ in range(20):
                out.write(block)
        made.append(path)
    return made


def signed_in(stack: Stack, browser: Any, name: str, width: int = 1280) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(stack.base_url + "user/login?redirect_to=/acme")
    page.fill("#user_name", name)
    page.fill("#password", PASSWORDS[name])
    page.click("button[type=submit]:has-text('Sign in')")
    page.wait_for_url(re.compile(r"/acme$"))
    return page


def check_page(page: Any, name: str, width: int) -> list[str]:
    """Usable at `width`, headings in order, a screenshot; the axe violations found."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, (name, width, scroll)
    levels = page.evaluate(
        "[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map(h => +h.tagName[1])"
    )
    assert levels[0] == 1 and levels.count(1) == 1, (name, levels)
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels)), (name, levels)
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"console-{name}-{width}.png"), full_page=True)
    return [f"{name}@{width}: {v}" for v in _axe_violations(page)]


def pasted(page: Any, label: str) -> str:
    """The feed URL the new-key page shows for `label`."""
    for dt, dd in zip(
        page.locator("dl.feeds dt").all_inner_texts(),
        page.locator("dl.feeds pre.paste").all_inner_texts(),
        strict=True,
    ):
        if dt.startswith(label):
            return html.unescape(dd.strip())
    raise AssertionError(f"no feed URL for {label}")


def local(stack: Stack, url: str) -> str:
    assert url.startswith(stack.base_url), url
    return "/" + url.removeprefix(stack.base_url)


def test_a_publisher_releases_stages_and_pulls_back_in_the_browser(
    stack: Stack, browser: Any, files: list[Path], node: clients.RunNode, tmp_path: Path
) -> None:
    page = signed_in(stack, browser, "wes")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    progress: dict[str, list[int]] = {}

    def on_console(message: Any) -> None:
        if message.text.startswith("progress|"):
            _, name, value = message.text.split("|")
            progress.setdefault(name, []).append(int(value))

    page.on("console", on_console)

    # an update key, shown once with the feed URLs to paste
    page.goto(f"{stack.base_url}{DESK}/settings/update-keys")
    page.fill("#name", "desk app")
    page.click("button:has-text('Create key')")
    assert page.locator("#key-secret").is_visible()
    check_url = pasted(page, "Update check")
    electron_feed = pasted(page, "electron-updater")
    assert "forge_uk_" in check_url and "forge_uk_" in electron_feed

    # a draft with a 20% rollout, through the form the releases page links to
    page.goto(f"{stack.base_url}{DESK}/releases")
    page.click("a:has-text('New release')")
    page.fill("#tag_name", "v2.0.0")
    page.fill("#name", "Desk 2")
    page.fill("#body", "## New\n\n* **faster**")
    page.fill("#rollout", "20")
    page.click("button:has-text('Preview notes')")
    assert page.locator(".preview strong").inner_text() == "faster"
    page.click("button:has-text('Save draft')")
    page.wait_for_url(re.compile(r"/releases/edit/v2\.0\.0$"))

    # two 20 MiB files at once, each with its own progress bar
    page.wait_for_selector("#attachment[multiple]", state="attached")  # the script is running
    page.evaluate(
        """() => new MutationObserver(records => records.forEach(r => {
               const bar = r.target.closest ? r.target.closest('li') : null;
               const p = bar && bar.querySelector('progress');
               if (p) console.log('progress|' + bar.firstChild.textContent + '|' + p.value);
           })).observe(document.getElementById('uploads'),
                       {subtree: true, attributes: true, attributeFilter: ['value']})"""
    )
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(  # slower than loopback, so the bars have time to move
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 8 * MIB},
    )
    page.set_input_files("#attachment", [str(path) for path in files])
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r"\?done=uploaded&files=2$"), timeout=120_000)
    assert page.locator("p.notice").inner_text() == "2 files uploaded."
    # sizes in the units of the pages and the CLI (one formatter: forge_common/units.py)
    assert "20.0 MiB" in page.locator("main table").inner_text()
    assert re.search(r"up to \d+\.\d GiB", page.locator("label[for=attachment]").inner_text())
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    for path in files:
        seen = progress.get(path.name, [])
        assert any(0 < value < 100 for value in seen), (path.name, seen)  # it advanced
        assert seen == sorted(seen), seen
        assert page.locator(f"td a:has-text('{path.name}')").is_visible()

    # published: the update check offers it at once, through the pasted URL with no header
    page.click("button:has-text('Publish release')")
    page.wait_for_url(re.compile(r"/releases/tag/v2\.0\.0$"))
    check = local(stack, check_url.format(version="1.0.0", platform="darwin", arch="arm64"))
    answer = stack.get(check)
    assert answer.status == 200 and json.loads(answer.body)["name"] == "v2.0.0"
    download = json.loads(answer.body)["url"]
    got = stack.get(local(stack, download))
    assert got.status == 200 and len(got.body) == 20 * MIB

    # staged at 20%: electron-updater decides with its staging id
    inside = node("electron-updater.js", electron_feed, "1.0.0", str(tmp_path / "in"), INSIDE)
    assert (inside["available"], inside["version"], inside["stagingPercentage"]) == (
        True,
        "2.0.0",
        20,
    )
    assert Path(inside["downloaded"][0]).stat().st_size == 20 * MIB
    outside = node("electron-updater.js", electron_feed, "1.0.0", str(tmp_path / "o1"), OUTSIDE)
    assert outside["available"] is False

    # raised to 100 from the release page
    assert "20%" in page.locator("#rollout-value").inner_text()
    page.fill("#rollout-new", "100")
    page.click("button:has-text('Raise rollout')")
    page.wait_for_url(re.compile(r"/releases/tag/v2\.0\.0$"))
    outside = node("electron-updater.js", electron_feed, "1.0.0", str(tmp_path / "o2"), OUTSIDE)
    assert (outside["available"], outside["version"]) == (True, "2.0.0")

    # pulled back to draft: the confirmation names who stops seeing it, and they do
    page.click("a:has-text('Pull back to draft')")
    assert "electron-updater (Linux AppImage)" in page.locator("#updaters").inner_text()
    assert page.locator("main strong:has-text('v1.0.0')").is_visible()
    page.click("button:has-text('Pull back to draft')")
    page.wait_for_url(re.compile(r"/releases/edit/v2\.0\.0$"))
    assert stack.get(check).status == 204  # 1.0.0 is the newest again: nothing to offer
    gone = node("electron-updater.js", electron_feed, "1.0.0", str(tmp_path / "o3"), OUTSIDE)
    assert gone["version"] != "2.0.0"
    assert errors == [], errors
    page.context.close()


def test_uploads_report_errors_per_file_and_can_be_cancelled(
    stack: Stack, browser: Any, files: list[Path], tmp_path: Path
) -> None:
    page = signed_in(stack, browser, "wes")
    page.goto(f"{stack.base_url}{DESK}/releases/edit/v1.0.0")
    page.wait_for_selector("#attachment[multiple]", state="attached")
    taken = tmp_path / "Desk-1.0.0.AppImage"  # a name this release already has
    taken.write_bytes(b"again")
    big = tmp_path / "big.bin"
    big.write_bytes(files[0].read_bytes())
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(  # slow enough for the cancel to come first
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": MIB // 2},
    )
    page.set_input_files("#attachment", [str(taken), str(big)])
    page.click("#upload-form button[type=submit]")
    items = page.locator("#uploads li")
    refused = items.filter(has_text="Desk-1.0.0.AppImage").locator(".status.failed")
    refused.wait_for()
    assert "already exists" in refused.inner_text()
    items.filter(has_text="big.bin").locator("button:has-text('Cancel')").click()
    cancelled = items.filter(has_text="big.bin").locator(".status.failed")
    cancelled.wait_for()
    assert cancelled.inner_text() == "Cancelled"
    assert page.url.endswith("/releases/edit/v1.0.0")  # nothing stored: no reload
    listing = stack.get(
        f"/api/v2/repos/{DESK}/releases/v1.0.0", {"Authorization": "token wes-console-token"}
    )
    names = [asset["name"] for asset in json.loads(listing.body)["assets"]]
    assert names == ["Desk-1.0.0.AppImage", "Desk-1.0.0-arm64-mac.zip"]
    page.context.close()


def test_an_owner_reorders_pins_and_the_overview_follows(stack: Stack, browser: Any) -> None:
    page = signed_in(stack, browser, "olga")
    page.goto(stack.base_url + "acme/settings/pins")
    page.click("button[aria-label='Move desk down']")
    page.wait_for_url(re.compile(r"/acme/settings/pins\?done=saved$"))
    overview = stack.get(
        "/api/v1/orgs/acme/overview", {"Authorization": "token olga-console-token"}
    )
    names = [pin["repo"]["name"] for pin in json.loads(overview.body)["pinned_repos"]]
    assert names == ["tools", "desk", "site"]
    page.context.close()


@pytest.mark.parametrize(("name", "status"), [("rita", 403), ("stan", 404)])
def test_readers_and_strangers_see_no_console(
    stack: Stack, browser: Any, name: str, status: int
) -> None:
    page = signed_in(stack, browser, name)
    for path in ("releases", "releases/tag/v1.0.0"):
        reply = page.goto(f"{stack.base_url}{DESK}/{path}")
        assert reply is not None
        if status == 403:
            assert reply.status == 200
            assert page.locator("a.console-link").count() == 0
            assert "New release" not in page.content() and "Edit release" not in page.content()
    for path in CONSOLE_URLS:
        reply = page.goto(f"{stack.base_url}{DESK}/{path}")
        assert reply is not None and reply.status == status, (path, reply.status)
    reply = page.goto(stack.base_url + "acme/settings/pins")
    assert reply is not None and reply.status == 403  # a public organization they are not owner of
    page.context.close()


def test_console_pages_are_accessible_at_both_widths(stack: Stack, browser: Any) -> None:
    problems: list[str] = []
    for width in WIDTHS:
        page = signed_in(stack, browser, "wes", width)
        for name, path in [
            ("new", "releases/new"),
            ("edit", "releases/edit/v1.0.0"),
            ("unpublish", "releases/edit/v1.0.0/unpublish"),
            ("withdraw", "releases/edit/v1.0.0/withdraw"),
            ("release", "releases/tag/v1.0.0"),
            ("settings", "settings"),
            ("update-keys", "settings/update-keys"),
            ("tauri-key", "settings/tauri-key"),
        ]:
            reply = page.goto(f"{stack.base_url}{DESK}/{path}")
            assert reply is not None and reply.status == 200, (name, reply.status)
            problems += check_page(page, name, width)
        page.context.close()
        owner = signed_in(stack, browser, "olga", width)
        owner.goto(stack.base_url + "acme/settings/pins")
        problems += check_page(owner, "pins", width)
        owner.context.close()
    assert problems == [], problems
