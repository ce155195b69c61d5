"""The asset suffix table of docs/releases.md (update rules 6-7): every platform value, both arch
columns, every pattern, and the priority order within each list. `match_asset` is the function the
update check uses; test_update.py covers the same through HTTP."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from forge_common.asset_match import ASSET_PATTERNS, match_asset
from forge_releases.models import Asset

ARM64 = {
    "darwin": [
        "arm64.zip",
        "darwin-arm64.zip",
        "macos-arm64.zip",
        "osx-arm64.zip",
        "universal.zip",
        ".zip",
    ],
    "windows": ["arm64.exe", "win-arm64.exe", "windows-arm64.exe", "setup-arm64.exe"],
    "linux": [
        "arm64.appimage",
        "linux-arm64.appimage",
        "aarch64.appimage",
        "arm64.deb",
        "arm64.rpm",
    ],
}
OTHER = {
    "darwin": [
        "x64.zip", "darwin-x64.zip", "macos-x64.zip", "osx-x64.zip", "intel.zip",
        "universal.zip", ".zip",
    ],
    "windows": ["x64.exe", "win-x64.exe", "windows-x64.exe", "setup-x64.exe", "setup.exe", ".exe"],
    "linux": [
        "x86_64.appimage", "linux-x64.appimage", "amd64.appimage", "amd64.deb", "x86_64.rpm",
        ".appimage", ".deb",
    ],
}  # fmt: skip
ALIASES = {"darwin": "darwin", "macos": "darwin", "windows": "windows", "win32": "windows",
           "linux": "linux"}  # fmt: skip


def assets(*names: str) -> list[Asset]:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        Asset(i + 1, 1, name, 100 + i, "application/octet-stream", "0" * 64, "u", 0, moment)
        for i, name in enumerate(names)
    ]


def test_asset_table_is_the_spec_table_verbatim() -> None:
    assert set(ASSET_PATTERNS) == set(ALIASES)
    for platform, row in ALIASES.items():
        arm64, other = ASSET_PATTERNS[platform]
        assert list(arm64) == ARM64[row], platform
        assert list(other) == OTHER[row], platform


CASES = [
    (platform, arch, pattern)
    for platform, row in ALIASES.items()
    for arch, column in (("arm64", ARM64), ("x64", OTHER))
    for pattern in column[row]
]


@pytest.mark.parametrize(("platform", "arch", "pattern"), CASES)
def test_asset_table_every_cell_matches_its_suffix(platform: str, arch: str, pattern: str) -> None:
    """Each pattern of each row (every platform alias) and column matches by suffix, any case."""
    name = "My-App-1.0.0-" + pattern.upper()
    found = match_asset(assets("README.md", name), platform, arch)
    assert found is not None and found.name == name


def _isolated(patterns: list[str]) -> list[tuple[str, str]]:
    """(pattern, a file name that matches it and no earlier pattern); patterns shadowed by an
    earlier, shorter suffix (darwin-arm64.zip behind arm64.zip) cannot be isolated."""
    result = []
    for i, pattern in enumerate(patterns):
        name = "app-" + pattern
        if not any(name.endswith(p) for p in patterns[:i]):
            result.append((pattern, name))
    return result


@pytest.mark.parametrize(
    ("platform", "arch", "column"),
    [(p, a, c) for p in ALIASES for a, c in (("arm64", ARM64), ("amd64", OTHER))],
)
def test_asset_table_priority_order_within_a_list(
    platform: str, arch: str, column: dict[str, list[str]]
) -> None:
    """Listed in reverse priority, the highest-priority pattern present still wins; removing it
    hands the choice to the next one."""
    ranked = _isolated(column[ALIASES[platform]])
    assert ranked  # windows arm64: every later pattern ends in arm64.exe, so one is left
    names = [name for _, name in ranked]
    for i, expected in enumerate(names):
        found = match_asset(assets(*reversed(names[i:])), platform, arch)
        assert found is not None and found.name == expected


def test_asset_table_first_asset_in_attachment_order_within_a_pattern() -> None:
    found = match_asset(assets("b-x64.zip", "a-x64.zip"), "darwin", "x64")
    assert found is not None and found.name == "b-x64.zip"


@pytest.mark.parametrize("arch", ["x64", "amd64", "ARM64", "aarch64", "arm", "", "x86"])
def test_asset_table_arm64_list_only_for_arch_exactly_arm64(arch: str) -> None:
    both = assets("app-x86_64.AppImage", "app-arm64.AppImage")
    found = match_asset(both, "linux", arch)
    assert found is not None and found.name == "app-x86_64.AppImage"
    found = match_asset(both, "linux", "arm64")
    assert found is not None and found.name == "app-arm64.AppImage"


def test_asset_table_columns_do_not_leak() -> None:
    """The arm64 Linux and Windows lists have no generic suffix: an x64-only release is 204."""
    assert match_asset(assets("app-x86_64.AppImage", "app.deb"), "linux", "arm64") is None
    assert match_asset(assets("App-Setup.exe", "App-x64.exe"), "windows", "arm64") is None
    assert match_asset(assets("app-arm64.rpm"), "linux", "x64") is None
    # on macOS both lists end in `.zip`, so any zip is a last resort
    found = match_asset(assets("App-x64.zip"), "darwin", "arm64")
    assert found is not None and found.name == "App-x64.zip"


@pytest.mark.parametrize("platform", ["freebsd", "Darwin", "Linux", "win", "osx", ""])
def test_asset_table_unknown_platform_matches_nothing(platform: str) -> None:
    assert match_asset(assets("a.zip", "a.exe", "a.AppImage", "a.deb"), platform, "x64") is None
