"""What the rollout control and the pull-back confirmation tell a publisher: the release's rollout
and which updaters are offered it now (so which stop seeing it when it goes back to draft)."""

from __future__ import annotations

from ..models import Release


def rollout_of(release: Release) -> int:
    """The percentage of installs offered the release (feeds/channels.py: None is everyone)."""
    return release.rollout if release.rollout is not None else 100


# (updater, what in the file names makes a feed offer the release to it); the feeds' own
# matching (feeds/) decides the details, this only names who reads the release.
_UPDATERS = (
    ("Squirrel.Windows (Electron's autoUpdater on Windows, electron-winstaller)", ("-full.nupkg",)),
    ("Squirrel.Mac (Electron's autoUpdater on macOS)", (".zip",)),
    ("electron-updater (Windows installers)", (".exe",)),
    ("electron-updater (macOS)", (".zip", ".dmg")),
    ("electron-updater (Linux AppImage)", (".AppImage",)),
    ("Tauri's updater (signed bundles)", (".sig",)),
)


def updaters_offered(release: Release) -> list[str]:
    """The updaters whose feeds can offer this release, from its files; the update check and
    the download page always show a published release."""
    names = [asset.name for asset in release.assets]
    found = [
        label
        for label, endings in _UPDATERS
        if any(name.endswith(ending) for name in names for ending in endings)
    ]
    return [
        *found,
        "the update check API (/releases/update) and every client that calls it",
        "the download page, the latest release API and the release lists of anonymous visitors",
    ]
