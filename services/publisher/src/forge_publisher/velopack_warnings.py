"""Warnings of `forge release publish` about Velopack packages (docs/releases.md "Velopack"; the
release is published anyway): a `.nupkg` whose `.nuspec` version is not the release's tag, or
whose package id is not the one of the other packages of its channel, published earlier or with
it. Velopack's client offers the highest version of a channel's feed whatever the tag or the id,
so such a package reaches installs of another app, or under a version nobody meant.

The packages are read from the files about to be uploaded (forge_common.nuspec); the earlier ids
come from the channel's own feed, read with the publisher's token.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from forge_common.nuspec import Package, read_package
from forge_common.versions import parse_version

# a channel -> the package ids its feed lists now (an empty set when it lists none)
FeedIds = Callable[[str], Awaitable[set[str]]]


def local_packages(files: Sequence[Path]) -> list[tuple[Path, Package]]:
    """The Velopack packages among `files`, with what their `.nuspec` says."""
    found = []
    for path in files:
        if not path.name.lower().endswith(".nupkg"):
            continue
        with path.open("rb") as file:
            package = read_package(file)
        if package.velopack:
            found.append((path, package))
    return found


def _version_warning(tag: str, path: Path, package: Package) -> list[str]:
    tagged = parse_version(tag)
    said = parse_version(package.version)
    if tagged is None or said is None or tagged == said:
        return []
    return [
        f"warning: {path.name} is version {package.version} (its .nuspec), the tag is {tag}: "
        "Velopack's client is offered the package's version, whatever the release says"
    ]


async def velopack_warnings(tag: str, files: Sequence[Path], feed_ids: FeedIds) -> list[str]:
    lines: list[str] = []
    packages = local_packages(files)
    by_channel: dict[str, set[str]] = {}
    for path, package in packages:
        lines += _version_warning(tag, path, package)
        by_channel.setdefault(package.channel, set()).add(package.package_id)
    for channel, ids in sorted(by_channel.items()):
        earlier = await feed_ids(channel)
        known = earlier or ids
        for path, package in packages:
            if package.channel == channel and (package.package_id not in known or len(ids) > 1):
                lines.append(
                    f"warning: {path.name} is package {package.package_id}, but the channel "
                    f"{channel} has {', '.join(sorted((earlier | ids) - {package.package_id}))}: "
                    "Velopack's client takes the newest package of a channel, whatever its id"
                )
    return lines
