"""electron-updater's `{channel}{-mac,-linux,-linux-arm64,...}.yml` files (electron-builder's
generic provider): version, files with base64 SHA-512 and sizes, path, releaseDate, releaseName,
releaseNotes. The body is JSON, which is YAML: electron-updater parses it with js-yaml.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import semver
from forge_common.asset_match import (
    DARWIN,
    WINDOWS,
    YmlFile,
    facts,
    of_platform,
    ranked,
)
from forge_common.render import rfc3339

from ..models import Asset, Release

Link = Callable[[Release, Asset], str]


def files_of(release: Release, wanted: YmlFile) -> list[Asset]:
    if wanted.platform == DARWIN:
        return of_platform(release.assets, DARWIN, (".zip", ".dmg"))
    kinds = (".exe",) if wanted.platform == WINDOWS else (".appimage",)
    found = ranked(release.assets, wanted.platform, wanted.arch, kinds)
    if wanted.arch != "x64":
        # electron-builder leaves x64 unnamed: a nameless build is never another arch's update
        found = [asset for asset in found if facts(asset.name).arch == wanted.arch]
    return found


def sha512_base64(hex_digest: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_digest)).decode()


def update_info(
    version: semver.Version,
    release: Release,
    files: Sequence[Asset],
    link: Link,
    staging_percentage: int | None = None,
) -> dict[str, Any]:
    entries = [
        {"url": link(release, a), "sha512": sha512_base64(a.sha512), "size": a.size} for a in files
    ]
    info: dict[str, Any] = {
        "version": str(version),
        "files": entries,
        "path": entries[0]["url"],
        "sha512": entries[0]["sha512"],
        "releaseDate": rfc3339(release.created_at),
        "releaseName": release.title or release.tag,
        "releaseNotes": release.note,
    }
    if staging_percentage is not None:
        info["stagingPercentage"] = staging_percentage
    return info
