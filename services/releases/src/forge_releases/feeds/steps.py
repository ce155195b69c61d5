"""Required steps in the feeds whose client tells its running version in its request but which
answer with a list the client chooses from (Squirrel.Windows' RELEASES: `?localVersion=` on the
feed, the version in update.electronjs.org's path; Velopack: `?localVersion=`): an install below
a required release is given the list topped by that release, so the client's own choice is the
step (docs/release-safety.md "Decisions").

Kept answers stay few: an answer is kept per *band*, the required release the running version is
below (`<1.5.0`), or `*` above every one, never per running version. The key a request is known by
before routing ends with the running version as told (`-` when none could be read); the kept
answer's key ends with its band instead (`Feed.kept_key`). Which releases are steps is found once
per repository's releases and kept beside its answers (`RepoReleases.steps`), and so is each
request key's band (`RepoReleases.bands`): a repeated check costs one more dictionary lookup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import semver
from forge_common.versions import parse_version

from ..models import Release

NO_VERSION = "-"  # the running-version word of a request that told none (or none readable)
NO_STEP = "*"  # the band of installs that no required release is above
_BELOW = "<"
_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
Steps = tuple[semver.Version, ...]  # the required versions, lowest first


def running_word(raw: str) -> str:
    """What a key says of the running version told: the text itself when it can be a key's
    word (a version has no space), else `-` (the newest is offered, as to one that told none)."""
    return raw if _WORD.fullmatch(raw) else NO_VERSION


def unsaid(_: str) -> Mapping[str, str]:
    """Insights' dimensions of the running-version word: none (feed.py `Counted`)."""
    return {}


def required_versions(found: Iterable[tuple[semver.Version, Release]]) -> Steps:
    """The versions of the required releases among `found` (each version once, lowest first)."""
    return tuple(sorted({version for version, release in found if release.required}))


def step_above(steps: Sequence[semver.Version], running: str) -> semver.Version | None:
    """The lowest required version above the running one (`running` as a key says it); None when
    there is none, or the running version is not known."""
    if not steps or running == NO_VERSION:
        return None
    current = parse_version(running)
    if current is None:
        return None
    for step in steps:
        if step > current:
            return step
    return None


def band(step: semver.Version | None) -> str:
    """The last word of the key an answer for installs below `step` is kept under."""
    return NO_STEP if step is None else f"{_BELOW}{step}"


def step_of_key(kept_key: str) -> semver.Version | None:
    """The required version the band a kept answer's key ends with names (None: `*`, no step)."""
    word = kept_key.rpartition(" ")[2]
    if not word.startswith(_BELOW):
        return None
    return semver.Version.parse(word[len(_BELOW) :])


def up_to(
    found: Iterable[tuple[semver.Version, Release]], step: semver.Version | None
) -> list[tuple[semver.Version, Release]]:
    """The candidates not above the step (all of them when there is none)."""
    return [item for item in found if step is None or item[0] <= step]
