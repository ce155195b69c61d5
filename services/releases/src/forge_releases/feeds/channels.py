"""Which stored releases a feed considers, newest version first.

Channels: `stable` (also electron-updater's `latest`) is the releases that are not prereleases,
as in the spec's update check. Any other channel name takes the published releases whose version
has no prerelease part or whose prerelease part starts with that name (`beta` takes `1.2.0` and
`1.3.0-beta.2`, not `1.3.0-alpha.1`); a release marked prerelease whose tag has no prerelease part
belongs to every such channel. Tags that are not semantic versions are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import semver
from forge_common.versions import parse_version

from ..models import Release
from ..read.cache import RepoReleases
from ..read.update import STABLE

STABLE_NAMES = frozenset({STABLE, "latest"})
_LEADING_WORD = re.compile(r"[A-Za-z]+")


def _in_channel(version: semver.Version, channel: str) -> bool:
    if not version.prerelease:
        return True
    word = _LEADING_WORD.match(version.prerelease)
    return word is not None and word.group().lower() == channel.lower()


def newest_first(releases: RepoReleases, channel: str) -> Iterator[tuple[semver.Version, Release]]:
    """(version, release) of the channel, highest version first (equal versions: list order)."""
    pool: Sequence[Release] = releases.stable if channel in STABLE_NAMES else releases.everything
    found = []
    for release in pool:
        version = parse_version(release.tag)
        if version is None:
            continue
        if channel not in STABLE_NAMES and not _in_channel(version, channel):
            continue
        found.append((version, release))
    # reverse=True keeps list order among equal versions (the sort is stable)
    found.sort(key=lambda item: item[0], reverse=True)
    return iter(found)


def staged(release: Release) -> int | None:
    """The release's staged-rollout percentage, None when every install is offered it."""
    rollout = release.rollout
    return rollout if rollout is not None and rollout < 100 else None


def fully_rolled_out(
    candidates: Iterator[tuple[semver.Version, Release]],
) -> list[tuple[semver.Version, Release]]:
    """The candidates without releases in a staged rollout, for clients that send no staging id
    (Squirrel.Mac, Tauri): nothing places such an install inside or outside the percentage, and
    offering the release to all of them would exceed it. They get it when it reaches 100."""
    return [(version, release) for version, release in candidates if staged(release) is None]


def display_version(version: semver.Version) -> str:
    """The version as clients compare it: the tag without its leading `v`."""
    return str(version)
