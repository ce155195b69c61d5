"""The one asset matcher of every feed: platform and architecture tokens found anywhere in a file
name, in the default names of electron-builder (`App-1.2.0-arm64-mac.zip`), Electron Forge
(`App-darwin-arm64-1.2.0.zip`), Tauri (`App_1.2.0_aarch64.dmg`, `App_x64-setup.exe`) and Squirrel
(`App-1.2.0-full.nupkg`).

The spec's update check keeps its own suffix table (`ASSET_PATTERNS`, `match_asset`, at the end),
which this matcher never changes. Both are pure, shared by the server (forge_releases) and the
publishing client (forge_publisher), which warns when the two disagree. Ranking: an exact
architecture beats `universal`, which beats a name with no architecture; a name carrying another
architecture never matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

DARWIN = "darwin"
WINDOWS = "windows"
LINUX = "linux"
UNIVERSAL = "universal"

# token → canonical platform
_PLATFORMS = {
    "mac": DARWIN,
    "macos": DARWIN,
    "darwin": DARWIN,
    "osx": DARWIN,
    "win": WINDOWS,
    "win32": WINDOWS,
    "win64": WINDOWS,
    "windows": WINDOWS,
    "linux": LINUX,
}
# token → canonical architecture (Node's names: what Electron and update-electron-app send)
_ARCHS = {
    "arm64": "arm64",
    "aarch64": "arm64",
    "x64": "x64",
    "x86_64": "x64",
    "amd64": "x64",
    "intel": "x64",
    "ia32": "ia32",
    "i386": "ia32",
    "i686": "ia32",
    "x86": "ia32",
    "armv7l": "armv7l",
    "armv7": "armv7l",
    "armhf": "armv7l",
    UNIVERSAL: UNIVERSAL,
}
# what a client may send → canonical (Tauri says x86_64/aarch64/i686/armv7, Squirrel amd64/x86)
ARCH_ALIASES = {**_ARCHS, "universal": UNIVERSAL}
# extensions that say the platform by themselves
_EXTENSION_PLATFORMS = (
    (".app.tar.gz", DARWIN),
    (".dmg", DARWIN),
    (".pkg", DARWIN),
    (".exe", WINDOWS),
    (".msi", WINDOWS),
    (".nupkg", WINDOWS),
    (".appimage", LINUX),
    (".appimage.tar.gz", LINUX),
    (".deb", LINUX),
    (".rpm", LINUX),
)
# x86_64 and x86-64 are one token, not `x86` and `64`
_SPLIT = re.compile(r"x86[_-]64|[a-z0-9]+")


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


@dataclass(frozen=True, slots=True)
class NameFacts:
    """What a file name says: platform and architecture, None when it does not say."""

    platform: str | None
    arch: str | None


def facts(name: str) -> NameFacts:
    lowered = name.lower()
    platform = arch = None
    for raw in _SPLIT.findall(lowered):
        token = "x86_64" if raw in ("x86_64", "x86-64") else raw
        if platform is None and token in _PLATFORMS:
            platform = _PLATFORMS[token]
        if arch is None and token in _ARCHS:
            arch = _ARCHS[token]
    if platform is None:
        for extension, implied in _EXTENSION_PLATFORMS:
            if lowered.endswith(extension):
                platform = implied
                break
    return NameFacts(platform, arch)


def canonical_arch(value: str) -> str | None:
    """A client's architecture name in our words (`aarch64` → `arm64`), None when unknown."""
    return ARCH_ALIASES.get(value.lower())


def _arch_rank(found: str | None, wanted: str) -> int:
    """3 exact, 2 universal (macOS builds for both), 1 no architecture in the name, 0 another."""
    if found == wanted:
        return 3
    if found == UNIVERSAL:
        return 2 if wanted in ("arm64", "x64") else 0
    return 1 if found is None else 0


def ranked(assets: Iterable[T], platform: str, arch: str, kinds: Sequence[str]) -> list[T]:
    """The assets that fit `platform`/`arch` and end in one of `kinds` (file kinds in order of
    preference, lower case), best first: exact architecture, then universal, then none; then
    the kind's order; then attachment order."""
    scored: list[tuple[int, int, int, T]] = []
    for position, asset in enumerate(assets):
        lowered = asset.name.lower()
        kind = next((i for i, k in enumerate(kinds) if lowered.endswith(k)), None)
        if kind is None:
            continue
        said = facts(asset.name)
        if said.platform not in (None, platform):
            continue
        rank = _arch_rank(said.arch, arch)
        if rank:
            scored.append((-rank, kind, position, asset))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored]


def best(assets: Iterable[T], platform: str, arch: str, kinds: Sequence[str]) -> T | None:
    found = ranked(assets, platform, arch, kinds)
    return found[0] if found else None


def of_platform(assets: Iterable[T], platform: str, kinds: Sequence[str]) -> list[T]:
    """Every asset of `platform` (by its tokens or extension; a name that says no platform fits
    any) ending in one of `kinds`, by kind then attachment order: for feeds that list every
    architecture and let the client choose (electron-updater's latest-mac.yml)."""
    scored: list[tuple[int, int, T]] = []
    for position, asset in enumerate(assets):
        lowered = asset.name.lower()
        kind = next((i for i, k in enumerate(kinds) if lowered.endswith(k)), None)
        if kind is not None and facts(asset.name).platform in (None, platform):
            scored.append((kind, position, asset))
    scored.sort(key=lambda item: item[:2])
    return [item[2] for item in scored]


# The asset suffix table of docs/releases.md, verbatim:
# (platform values, arm64 patterns, any-other-arch patterns).
_DARWIN = (
    ("arm64.zip", "darwin-arm64.zip", "macos-arm64.zip", "osx-arm64.zip", "universal.zip", ".zip"),
    (
        "x64.zip",
        "darwin-x64.zip",
        "macos-x64.zip",
        "osx-x64.zip",
        "intel.zip",
        "universal.zip",
        ".zip",
    ),
)
_WINDOWS = (
    ("arm64.exe", "win-arm64.exe", "windows-arm64.exe", "setup-arm64.exe"),
    ("x64.exe", "win-x64.exe", "windows-x64.exe", "setup-x64.exe", "setup.exe", ".exe"),
)
_LINUX = (
    (
        "arm64.appimage",
        "linux-arm64.appimage",
        "aarch64.appimage",
        "arm64.deb",
        "arm64.rpm",
    ),
    (
        "x86_64.appimage",
        "linux-x64.appimage",
        "amd64.appimage",
        "amd64.deb",
        "x86_64.rpm",
        ".appimage",
        ".deb",
    ),
)
ASSET_PATTERNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "darwin": _DARWIN,
    "macos": _DARWIN,
    "windows": _WINDOWS,
    "win32": _WINDOWS,
    "linux": _LINUX,
}


def match_asset(assets: Sequence[T], platform: str, arch: str) -> T | None:
    """docs/releases.md "Update check rules" 6-7: the first pattern that matches any asset wins;
    within it, the first asset."""
    table = ASSET_PATTERNS.get(platform)
    if table is None:
        return None
    patterns = table[0] if arch == "arm64" else table[1]
    lowered = [(asset.name.lower(), asset) for asset in assets]
    for pattern in patterns:
        for name, asset in lowered:
            if name.endswith(pattern):
                return asset
    return None


# electron-updater's yml files (feeds/electron.py serves them; the publisher checks uploaded ones):
# `${channel}${prefix}.yml`; prefix "" (Windows), "-mac", "-linux" (x64) or
# "-linux-${arch}"
_FILE = re.compile(r"^(?P<channel>[A-Za-z0-9_.]+)(?P<prefix>-mac|-linux(?:-[a-z0-9]+)?)?\.yml$")


@dataclass(frozen=True, slots=True)
class YmlFile:
    channel: str
    platform: str
    arch: str  # "" for macOS: every architecture is listed and the client chooses


def parse_file_name(name: str) -> YmlFile | None:
    found = _FILE.match(name)
    if found is None:
        return None
    prefix = found["prefix"] or ""
    if prefix == "-mac":
        return YmlFile(found["channel"], DARWIN, "")
    if prefix.startswith("-linux"):
        arch = prefix[len("-linux-") :] if prefix.startswith("-linux-") else "x64"
        return YmlFile(found["channel"], LINUX, arch)
    return YmlFile(found["channel"], WINDOWS, "x64")
