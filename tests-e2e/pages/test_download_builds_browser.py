"""The download page in Debian's Chromium for the Mac cases electron-builder produces (docs/pages.md
"Download page"): an Intel-only release, an arm64-only release and a universal build, each visited
from an Intel Mac and from Apple silicon (client hints, as Chromium sends them). A Mac is offered
its own build or a universal one, never another architecture's: without one, the page says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .test_pages_browser import MAC_UA, OUTPUT, _visitor, browser

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = pytest.mark.full

if TYPE_CHECKING:
    from ..conftest import Stack

__all__ = ["browser"]  # the fixture, used by name

BUILDS = {
    "intel-only": ["MyApp-1.2.0.dmg", "MyApp-1.2.0-mac.zip", "MyApp Setup 1.2.0.exe"],
    "arm-only": ["MyApp-1.2.0-arm64.dmg", "MyApp-1.2.0-arm64-mac.zip", "MyApp Setup 1.2.0.exe"],
    "universal": ["MyApp-1.2.0-universal.dmg", "MyApp-1.2.0-universal-mac.zip"],
}
WORLD = {
    "users": [{"name": "dana"}],
    "repos": [
        {
            "owner": "dana",
            "name": name,
            "releases": [
                {
                    "tag": "v1.2.0",
                    "created_at": "2026-02-01T00:00:00Z",
                    "assets": [{"name": n, "size": 1000 + i} for i, n in enumerate(files)],
                }
            ],
        }
        for name, files in BUILDS.items()
    ],
}
INTEL, APPLE = "x86", "arm"


@pytest.mark.parametrize(
    ("repo", "arch", "expected"),
    [
        ("intel-only", INTEL, "MyApp-1.2.0.dmg"),
        # electron-builder leaves x64 unnamed: a build naming no architecture fits either Mac
        ("intel-only", APPLE, "MyApp-1.2.0.dmg"),
        ("arm-only", INTEL, None),
        ("arm-only", APPLE, "MyApp-1.2.0-arm64.dmg"),
        ("universal", INTEL, "MyApp-1.2.0-universal.dmg"),
        ("universal", APPLE, "MyApp-1.2.0-universal.dmg"),
    ],
)
def test_each_mac_gets_its_own_build_or_a_plain_no(
    stack: Stack, browser: Any, repo: str, arch: str, expected: str | None
) -> None:
    page = _visitor(browser, 1280, "macOS", arch, MAC_UA)
    reply = page.goto(f"{stack.base_url}dana/{repo}/download")
    assert reply is not None and reply.status == 200
    button = page.locator("a.button.download")
    if expected is None:
        assert button.count() == 0
        said = page.locator("p.no-build").inner_text()
        assert said.startswith(f"There is no build of {repo} for macOS (Intel).")
        # the arm64 build is listed for what it is, never offered as the Intel one
        listed = page.locator("ul.others li").all_inner_texts()
        assert any(t.startswith("macOS (Apple silicon): MyApp-1.2.0-arm64.dmg") for t in listed)
        assert not any(t.startswith("macOS (Intel)") for t in listed)
    else:
        assert button.is_visible()
        href = button.get_attribute("href")
        assert href is not None and href.endswith(f"/releases/download/v1.2.0/{expected}")
        label = "Apple silicon" if arch == APPLE else "Intel"
        assert f"Download for macOS ({label})" in button.inner_text()
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"download-{repo}-{arch}.png"))
    page.context.close()
