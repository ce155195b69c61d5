"""Squirrel feeds: the Squirrel.Mac JSON answer and Squirrel.Windows RELEASES (clients.md).

RELEASES lines are `SHA1 URL size`, plus ` # NN%` for a release in a staged rollout; the URL is
absolute and ends in the asset's file name, from which the client reads the version
(`Name-1.2.3-full.nupkg`). One file per Windows architecture: the newest full package of the
channel for that architecture and every delta of the channel up to it, oldest first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import semver
from forge_common.asset_match import DARWIN, WINDOWS, best
from forge_common.render import rfc3339

from ..models import Asset, Release
from .channels import staged

FULL = ("-full.nupkg",)
DELTA = ("-delta.nupkg",)
MAC_KINDS = (".zip",)  # Squirrel.Mac installs zips only

Link = Callable[[Release, Asset], str]


def releases_lines(
    candidates: Sequence[tuple[semver.Version, Release]], arch: str, link: Link
) -> str | None:
    """The RELEASES text, or None when no release of the channel has a full package for `arch`
    (never an empty file: the client throws on one)."""
    newest = None
    for version, release in candidates:
        full = best(release.assets, WINDOWS, arch, FULL)
        if full is not None:
            newest = (version, release, full)
            break
    if newest is None:
        return None
    top, top_release, full = newest
    fallback = _unstaged_full(candidates, top, arch) if staged(top_release) else None
    lines = []
    for version, release in reversed(candidates):  # oldest first, as Squirrel writes them
        if version > top:
            continue
        if fallback is not None and release is fallback[0]:
            lines.append(_line(release, fallback[1], link))
        delta = best(release.assets, WINDOWS, arch, DELTA)
        if delta is not None:
            lines.append(_line(release, delta, link))
    lines.append(_line(top_release, full, link))
    return "\n".join(lines) + "\n"


def _unstaged_full(
    candidates: Sequence[tuple[semver.Version, Release]], below: semver.Version, arch: str
) -> tuple[Release, Asset] | None:
    """The newest full package below a staged release that every install may take: Squirrel
    drops the staged lines outside its percentage, and a file left without a full package makes it
    throw."""
    for version, release in candidates:
        if version < below and staged(release) is None:
            full = best(release.assets, WINDOWS, arch, FULL)
            if full is not None:
                return release, full
    return None


def _line(release: Release, asset: Asset, link: Link) -> str:
    line = f"{asset.sha1.upper()} {link(release, asset)} {asset.size}"
    percent = staged(release)
    return f"{line} # {percent}%" if percent is not None else line


def mac_update(
    candidates: Sequence[tuple[semver.Version, Release]],
    current: semver.Version,
    arch: str,
    link: Link,
) -> dict[str, Any] | None:
    """Squirrel.Mac's JSON for the newest release above `current` with a zip for `arch`, or None
    (204: Squirrel installs whatever `url` names, so the server alone says "not newer")."""
    for version, release in candidates:
        if version <= current:
            return None
        asset = best(release.assets, DARWIN, arch, MAC_KINDS)
        if asset is not None:
            return {
                "name": release.tag,
                "notes": release.note,
                "pub_date": rfc3339(release.created_at),
                "url": link(release, asset),
            }
    return None
