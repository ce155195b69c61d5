"""The update check (SPEC "Update check rules", GET .../releases/update) as pure functions.

`decide_update` picks the release and asset; `prepare_answer` turns that into the exact bytes
sent, so the handler can keep them in the cache and serve a repeated check without recomputing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import semver
from aiohttp import hdrs, web
from forge_common.render import dumps, rfc3339

from ..httpcache import cache_headers, etag_of, none_match
from ..models import Asset, Release
from ..urls import download_url

# SPEC asset suffix table, verbatim: (platform values, arm64 patterns, any-other-arch patterns).
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
WINDOWS_PLATFORMS = frozenset({"windows", "win32"})
STABLE = "stable"


@dataclass(frozen=True, slots=True)
class UpdateQuery:
    version: str  # as sent; rule 1 strips one leading "v"
    platform: str
    arch: str
    channel: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What the update check sends: 204 (body empty) or 200 with these exact bytes, with the
    headers for public and for private data prepared once."""

    status: int
    body: bytes = b""
    etag: str = ""
    public_headers: dict[str, str] = field(init=False)
    private_headers: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        extra = {"ETag": self.etag, "Content-Type": "application/json"} if self.body else {}
        object.__setattr__(self, "public_headers", {**cache_headers(True), **extra})
        object.__setattr__(self, "private_headers", {**cache_headers(False), **extra})

    def respond(self, request: web.Request, public: bool) -> web.Response:
        headers = self.public_headers if public else self.private_headers
        if self.etag and hdrs.IF_NONE_MATCH in request.headers and none_match(request, self.etag):
            return web.Response(
                status=304, headers={k: v for k, v in headers.items() if k != "Content-Type"}
            )
        return web.Response(status=self.status, body=self.body or None, headers=headers)


NO_UPDATE = Answer(204)


class BadVersion(ValueError):
    """Rule 1: the requested version is not a semantic version."""


def parse_version(text: str) -> semver.Version | None:
    """Strict SemVer 2.0 after removing one leading `v` (DESIGN §5); None when it does not parse."""
    try:
        return semver.Version.parse(text.removeprefix("v"))
    except (ValueError, TypeError):
        return None


def newest_release(releases: Sequence[Release], current: semver.Version) -> Release | None:
    """Rule 4: among candidates whose tag parses, the highest strictly greater than `current`
    (the first in list order among equal versions)."""
    best: tuple[semver.Version, Release] | None = None
    for release in releases:
        version = parse_version(release.tag)
        if version is None or version <= current:
            continue
        if best is None or version > best[0]:
            best = (version, release)
    return best[1] if best else None


def match_asset(assets: Sequence[Asset], platform: str, arch: str) -> Asset | None:
    """Rules 6-7: the first pattern that matches any asset wins; within it, the first asset."""
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


def windows_urls(assets: Sequence[Asset]) -> tuple[Asset | None, Asset | None]:
    """Rule 9: the last asset named RELEASES and the last ending in .nupkg (case-insensitive)."""
    releases_file = nupkg = None
    for asset in assets:
        name = asset.name.lower()
        if name == "releases":
            releases_file = asset
        if name.endswith(".nupkg"):
            nupkg = asset
    return releases_file, nupkg


def decide_update(
    stable: Sequence[Release], everything: Sequence[Release], query: UpdateQuery
) -> tuple[Release, Asset] | None:
    """Rules 1 and 3-7. Raises BadVersion (rule 1); None means 204."""
    current = parse_version(query.version)
    if current is None:
        raise BadVersion(query.version)
    release = newest_release(stable if query.channel == STABLE else everything, current)
    if release is None:
        return None
    asset = match_asset(release.assets, query.platform, query.arch)
    return (release, asset) if asset is not None else None


def update_body(
    app_url: str, owner: str, repo: str, release: Release, asset: Asset, platform: str
) -> dict[str, Any]:
    """Rules 8-9: the AppUpdateResponse; `mandatory` and empty platform members are omitted."""
    info: dict[str, Any] = {}
    if platform in WINDOWS_PLATFORMS:
        releases_file, nupkg = windows_urls(release.assets)
        if releases_file is not None:
            info["releases_url"] = download_url(
                app_url, owner, repo, release.tag, releases_file.name
            )
        if nupkg is not None:
            info["nupkg_url"] = download_url(app_url, owner, repo, release.tag, nupkg.name)
    if asset.size:
        info["size"] = asset.size
    return {
        "url": download_url(app_url, owner, repo, release.tag, asset.name),
        "name": release.tag,
        "notes": release.note,
        "pub_date": rfc3339(release.created_at),
        "platform": info,
    }


def prepare_answer(
    app_url: str,
    owner: str,
    repo: str,
    stable: Sequence[Release],
    everything: Sequence[Release],
    query: UpdateQuery,
) -> Answer:
    """The whole check, down to the bytes sent. Raises BadVersion."""
    found = decide_update(stable, everything, query)
    if found is None:
        return NO_UPDATE
    release, asset = found
    body = dumps(update_body(app_url, owner, repo, release, asset, query.platform))
    return Answer(200, body, etag_of(body))
