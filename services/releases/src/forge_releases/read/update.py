"""The update check's choice (docs/releases.md "Update check rules", GET .../releases/update) as
pure functions of the candidate releases and the query: `decide_update` picks the release and the
asset, or none. Nothing here builds a response: update_check.py turns the choice into the bytes
sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import semver
from forge_common.asset_match import match_asset
from forge_common.versions import parse_version

from ..models import Asset, Release

WINDOWS_PLATFORMS = frozenset({"windows", "win32"})
STABLE = "stable"


@dataclass(frozen=True, slots=True)
class UpdateQuery:
    version: str  # as sent; rule 1 strips one leading "v"
    platform: str
    arch: str
    channel: str


class BadVersion(ValueError):
    """Rule 1: the requested version is not a semantic version."""


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
