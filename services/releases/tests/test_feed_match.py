"""The feeds' asset matcher (forge_common/asset_match.py) on the default names each packager
produces, and the warning of `forge release publish` when the spec's suffix table would pick
another architecture."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from forge_common.asset_match import best, canonical_arch, facts
from forge_publisher.arch_warnings import arch_warnings


@dataclass(frozen=True)
class F:
    name: str


# electron-builder defaults: mac zip `${productName}-${version}-${arch}-mac.zip` (no arch for
# x64), dmg `${productName}-${version}-${arch}.dmg`, NSIS `${productName} Setup ${version}.exe`,
# AppImage `${productName}-${version}-${arch}.AppImage` (no arch for x64)
ELECTRON_BUILDER = [
    "App-1.2.0-mac.zip",
    "App-1.2.0-arm64-mac.zip",
    "App-1.2.0-universal-mac.zip",
    "App-1.2.0.dmg",
    "App-1.2.0-arm64.dmg",
    "App Setup 1.2.0.exe",
    "App-1.2.0.AppImage",
    "App-1.2.0-arm64.AppImage",
]
# Electron Forge makers: zip `${name}-${platform}-${arch}-${version}.zip`, Squirrel nupkg
FORGE = ["App-darwin-x64-1.2.0.zip", "App-darwin-arm64-1.2.0.zip", "app-1.2.0-full.nupkg"]
# Tauri v2 bundles as tauri-action uploads them
TAURI = [
    "App_1.2.0_aarch64.dmg",
    "App_aarch64.app.tar.gz",
    "App_aarch64.app.tar.gz.sig",
    "App_x64.app.tar.gz",
    "App_1.2.0_x64-setup.exe",
    "App_1.2.0_x64_en-US.msi",
    "app_1.2.0_amd64.AppImage",
    "app_1.2.0_aarch64.AppImage",
    "app-1.2.0-1.x86_64.rpm",
]


def pick(names: list[str], platform: str, arch: str, *kinds: str) -> str | None:
    found = best([F(n) for n in names], platform, arch, kinds)
    return found.name if found else None


@pytest.mark.parametrize(
    ("names", "platform", "arch", "kinds", "expected"),
    [
        (ELECTRON_BUILDER, "darwin", "arm64", (".zip",), "App-1.2.0-arm64-mac.zip"),
        (ELECTRON_BUILDER, "darwin", "x64", (".zip",), "App-1.2.0-universal-mac.zip"),
        (ELECTRON_BUILDER[:2], "darwin", "x64", (".zip",), "App-1.2.0-mac.zip"),
        (ELECTRON_BUILDER, "windows", "x64", (".exe",), "App Setup 1.2.0.exe"),
        (ELECTRON_BUILDER, "linux", "x64", (".appimage",), "App-1.2.0.AppImage"),
        (ELECTRON_BUILDER, "linux", "arm64", (".appimage",), "App-1.2.0-arm64.AppImage"),
        (FORGE, "darwin", "arm64", (".zip",), "App-darwin-arm64-1.2.0.zip"),
        (FORGE, "darwin", "x64", (".zip",), "App-darwin-x64-1.2.0.zip"),
        (FORGE, "windows", "x64", (".nupkg",), "app-1.2.0-full.nupkg"),
        (FORGE, "linux", "x64", (".zip",), None),  # darwin zips never reach Linux
        (TAURI, "darwin", "arm64", (".app.tar.gz",), "App_aarch64.app.tar.gz"),
        (TAURI, "darwin", "x64", (".app.tar.gz",), "App_x64.app.tar.gz"),
        (TAURI, "windows", "x64", ("-setup.exe", ".msi"), "App_1.2.0_x64-setup.exe"),
        (TAURI, "windows", "arm64", ("-setup.exe", ".msi"), None),
        (TAURI, "linux", "arm64", (".appimage",), "app_1.2.0_aarch64.AppImage"),
        (TAURI, "linux", "x64", (".appimage", ".rpm"), "app_1.2.0_amd64.AppImage"),
        (TAURI, "linux", "x64", (".rpm",), "app-1.2.0-1.x86_64.rpm"),
    ],
)
def test_matcher_picks_the_right_build(
    names: list[str], platform: str, arch: str, kinds: tuple[str, ...], expected: str | None
) -> None:
    assert pick(names, platform, arch, *kinds) == expected


def test_exact_arch_beats_universal_beats_none_whatever_the_order() -> None:
    names = ["App-mac.zip", "App-universal-mac.zip", "App-arm64-mac.zip"]
    assert pick(names, "darwin", "arm64", ".zip") == "App-arm64-mac.zip"
    assert pick(names[:2], "darwin", "arm64", ".zip") == "App-universal-mac.zip"
    assert pick(names[:1], "darwin", "arm64", ".zip") == "App-mac.zip"
    # universal is a macOS notion: no Windows arm64 client gets a universal file over nothing
    assert pick(["App-universal.exe"], "windows", "ia32", ".exe") is None


def test_tokens_and_client_arch_names() -> None:
    assert facts("App-1.2.0-x86_64.AppImage").arch == "x64"
    assert facts("App_1.2.0_x86-64.rpm").arch == "x64"
    assert facts("App-1.2.0-ia32-full.nupkg").platform == "windows"
    assert facts("App-osx-arm64.zip") == facts("App-darwin-aarch64.zip")
    assert facts("App-1.2.0.zip").platform is None
    assert [canonical_arch(a) for a in ("aarch64", "x86_64", "i686", "amd64", "bogus")] == [
        "arm64",
        "x64",
        "ia32",
        "x64",
        None,
    ]


def test_publish_warns_when_the_spec_table_sends_the_wrong_arch() -> None:
    # electron-builder's x64 zip has no arch: the spec's `.zip` fallback sends it to arm64 Macs
    lines = arch_warnings(["App-1.2.0-mac.zip", "App-1.2.0-arm64-mac.zip"])
    assert len(lines) == 1
    assert "platform=darwin&arch=arm64" in lines[0]
    assert "would send App-1.2.0-mac.zip; App-1.2.0-arm64-mac.zip fits" in lines[0]
    # an arm64-only Tauri AppImage is not sent to x64 Linux by the table, but an arm64-only zip is
    assert arch_warnings(["App-darwin-arm64-1.2.0.zip"]) == [
        "warning: the update check (?platform=darwin&arch=x64) would send "
        "App-darwin-arm64-1.2.0.zip: rename it with a suffix of docs/releases.md's table"
    ]
    # the spec's own suffixes: nothing to say
    assert arch_warnings(["App-1.2.0-arm64.zip", "App-1.2.0-x64.zip", "App-x64.exe"]) == []
