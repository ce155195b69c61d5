"""How the rules of release safety narrow what a feed that knows the running version may offer
(docs/release-safety.md "Decisions"), as one pure function the feeds share.

- Required step: an install below a required release is offered that release (or, when it has no
  file for the install, the newest above the install and not above it), never one beyond it.
- Roll back: an install on a withdrawn version with nothing newer to go to is offered the newest
  release that is not withdrawn, though it is lower, by a feed whose client installs a lower
  version (`can_go_down`): the feed compares against the lowest version there is instead.
- Mandatory: some critical release of the channel is above the install (the channel's minimum
  version is its highest critical release).

A withdrawn release is never a candidate (read/queries.py), so nothing here removes one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import semver

from ..models import Release

Candidate = tuple[semver.Version, Release]
# below every version: what a feed compares against to offer a lower release
BOTTOM = semver.Version(0, 0, 0, prerelease="0")


@dataclass(frozen=True, slots=True)
class View:
    """What the feed decides from: its candidates (newest first), the version it compares them
    against, and whether the update is mandatory."""

    candidates: list[Candidate]
    current: semver.Version
    mandatory: bool = False
    rolled_back: bool = False


def view_for(
    candidates: Iterable[Candidate],
    current: semver.Version,
    withdrawn: frozenset[str],
    *,
    can_go_down: bool,
) -> View:
    """The safety rules applied to `candidates` (newest version first) for an install running
    `current`; `withdrawn` holds the withdrawn versions as str(semver.Version)."""
    found = list(candidates)
    above = [(version, release) for version, release in found if version > current]
    mandatory = any(release.critical for _, release in above)
    steps = [version for version, release in above if release.required]
    if steps:
        step = min(steps)
        return View([c for c in found if c[0] <= step], current, mandatory)
    if not above and found and can_go_down and str(current) in withdrawn:
        return View(found, BOTTOM, mandatory, rolled_back=True)
    return View(found, current, mandatory)


def minimum_version(candidates: Iterable[Candidate]) -> semver.Version | None:
    """The channel's minimum version: its highest critical release (None: there is none)."""
    critical = [version for version, release in candidates if release.critical]
    return max(critical) if critical else None
