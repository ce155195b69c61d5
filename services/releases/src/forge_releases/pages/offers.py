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
from forge_common.versions import parse_version

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


def by_version(releases: Sequence[Release]) -> list[Release]:
    """The releases an updater can be offered, highest version first, as the update check and
    the feeds compare them (equal versions: list order): a tag that is not a semantic version
    (a nightly `latest-build`) is compared by no updater, so no page offers it as the latest."""
    versioned = [(v, r) for r in releases if (v := parse_version(r.tag)) is not None]
    versioned.sort(key=lambda item: item[0], reverse=True)  # stable: list order among equals
    return [release for _, release in versioned]


def page_latest(releases: Sequence[Release]) -> Release | None:
    """The release the pages call "Latest": the one an updater on any older version is offered
    (the highest version), never a tag no updater can compare. The latest API keeps the spec's
    rule (the newest in list order): docs/pages.md "Latest on the pages"."""
    ordered = by_version(releases)
    return ordered[0] if ordered else None


def newest_with_build(releases: Sequence[Release], target: Target | None) -> Release | None:
    """The highest version holding a build for the visitor (as the update check would offer):
    a newer release with no such build, such as a tag holding only a yml, does not hide it.
    Without a known platform, the highest version."""
    ordered = by_version(releases)
    if target is not None:
        for release in ordered:
            if offered(release, target) is not None:
                return release
    return ordered[0] if ordered else None


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
