"""Files named relative to the electron feed: electron-updater's generic provider resolves each
`url:` and `path:` of a yml against the feed's own URL (GenericProvider.resolveFiles), so an
uploaded electron-builder yml (`url: MyApp-Setup-1.2.0.exe`) makes it ask for
`.../feeds/electron/MyApp-Setup-1.2.0.exe`, `?key=` kept. Such a name is found among the
published releases, newest first: the exact name, else the same name spelled with dashes or dots
where the stored one has spaces (forge_common/asset_names.py).
"""

from __future__ import annotations

from forge_common.asset_names import loose_key

from ..models import Asset, Release
from ..read.cache import RepoReleases


def find_named(releases: RepoReleases, name: str) -> tuple[Release, Asset] | None:
    """The release and asset an updater means by `name`, None when no published release has it."""
    for release in releases.everything:
        for asset in release.assets:
            if asset.name == name:
                return release, asset
    key = loose_key(name)
    if not key:
        return None
    for release in releases.everything:
        for asset in release.assets:
            if loose_key(asset.name) == key:
                return release, asset
    return None
