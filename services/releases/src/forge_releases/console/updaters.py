"""What the rollout control and the pull-back confirmation tell a publisher: the release's rollout
and which updaters are offered it now (so which stop seeing it when it goes back to draft)."""

from __future__ import annotations

from ..feeds.registry import UPDATERS
from ..models import Release


def rollout_of(release: Release) -> int:
    """The percentage of installs offered the release (feeds/channels.py: None is everyone)."""
    return release.rollout if release.rollout is not None else 100


def updaters_offered(release: Release) -> list[str]:
    """The updaters whose feeds can offer this release, from its files; the update check and
    the download page always show a published release."""
    names = [asset.name for asset in release.assets]
    found = [
        updater.label
        for updater in UPDATERS  # each feed's own (feeds/registry.py)
        if any(name.endswith(ending) for name in names for ending in updater.endings)
    ]
    return [
        *found,
        "the update check API (/releases/update) and every client that calls it",
        "the download page, the latest release API and the release lists of anonymous visitors",
    ]


# What each updater does when the release it runs is withdrawn (docs/release-safety.md, the
# README's updater table): by the start of its label.
_ROLLBACK = (
    ("Squirrel.Mac", "rolls back: it installs the release it is given"),
    (
        "Squirrel.Windows",
        "rolls back: RELEASES then tops out lower, and it installs that full package",
    ),
    ("electron-updater", "rolls back only in apps that set allowDowngrade; the others stay"),
    ("Tauri", "rolls back only in apps whose version_comparator accepts a lower version"),
    ("Velopack", "rolls back only in apps that set AllowVersionDowngrade"),
)


def rollback_of(release: Release) -> tuple[list[str], list[str]]:
    """(what each of the release's updaters does with installs on it once withdrawn, what only
    stops offering it)."""
    rolls_back = []
    for label in updaters_offered(release)[:-2]:
        said = next((what for start, what in _ROLLBACK if label.startswith(start)), None)
        if said is not None:
            rolls_back.append(f"{label}: {said}")
    stops = [
        "the spec's update check (/releases/update): installs on it are offered nothing lower",
        "forge's update check (/update): rolls back with allow_downgrade=true",
        "the download page, the latest release API and the release lists",
    ]
    return rolls_back, stops
