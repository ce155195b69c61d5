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
