"""Which file of a release the pages offer each platform: the feeds' matcher (feeds/match.py:
the exact architecture, then a universal build, then a name that says no architecture; a name of
another architecture never), so an Intel Mac is never handed `App-1.2.0-arm64-mac.zip`. The
spec's update check keeps its own suffix table (read/update.py); pages are not bound to it.

Installers only, in order of preference per platform (docs/pages.md): an update package
(`.nupkg`, `.blockmap`, `.yml`, `.sig`) is never what a visitor should download.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_common.asset_match import best

from ..models import Asset, Release
from .platforms import Target

_KINDS = {
    "darwin": (".dmg", ".pkg", ".zip"),
    "windows": (".exe", ".msi"),
    "linux": (".appimage", ".deb", ".rpm"),
}


def offered(release: Release, target: Target) -> Asset | None:
    """The file of `release` a visitor on `target` should download, None when it has none."""
    return best(release.assets, target.platform, target.arch, _KINDS[target.platform])


def newest_with_build(releases: Sequence[Release], target: Target | None) -> Release | None:
    """The newest release holding a build for the visitor (as the update check would offer):
    a newer release with no such build, such as a tag holding only a yml, does not hide it.
    Without a known platform, the newest release."""
    if target is not None:
        for release in releases:
            if offered(release, target) is not None:
                return release
    return releases[0] if releases else None


_TITLE_TAIL = " -_:,"


def product_title(repo_name: str, release: Release) -> str:
    """What the download page calls the product: the release's title without its version, as
    publishers name releases ("Vault 7.7.7" or "Vault v7.7.7" for tag v7.7.7: "Vault"); the
    repository's name when the title is empty, only the version, or does not end with it
    ("Autumn update" names no product) (docs/pages.md)."""
    title = release.title.strip()
    for version in (release.tag, release.tag.removeprefix("v")):
        if version and title.endswith(version):
            title = title[: -len(version)].rstrip(_TITLE_TAIL)
            break
    else:
        return repo_name
    return title or repo_name
