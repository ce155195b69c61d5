"""Velopack (the successor of Squirrel.Windows; Windows, macOS and Linux apps): an app built with
`UpdateManager("{APP_URL}{owner}/{repo}/velopack")` asks for
`{owner}/{repo}/velopack/releases.{channel}.json` and downloads the packages it lists at
`{owner}/{repo}/velopack/{FileName}` (docs/releases.md "Velopack").

The feed is `{"Assets": [...]}` of the `.nupkg` packages of the published releases whose own
`.nuspec` names the channel asked for (feeds/nuspec.py, read once per asset and kept, migration
0009), with exactly the nine keys the client reads, never a null. A delta is listed only when the
Full of the version below it is listed: the client applies each delta to the version before it.

Staged rollouts: the client (Rust core: the Python, Node and C++ libraries) sends a per-install
`stagingId` (a UUID), which places the install in a bucket 0-100 as electron-updater and
Squirrel.Windows place theirs (the UUID's bytes 12-15, big-endian, as a fraction of 2^32-1); a
staged release is listed for the buckets below its percentage. Without a `stagingId` (the .NET
client sends none) a staged release is held back, as Squirrel.Mac's and Tauri's feeds do. The
bucket (not the id) is part of the kept answer's key, so an answer is kept per bucket.

Required steps: the client tells its running version (`localVersion`; the .NET client too, unless
its `QueryMode` sends no query) and installs the newest Full the feed lists, so an install below a
required release is given the feed without the packages above that release (steps.py; kept per
band of running versions). Which releases are steps is read from the packages of the channel, so
it is found when an answer is first built.

Roll back needs nothing of the feed: a withdrawn release is listed nowhere, and the client
installs the newest Full listed though it is lower only with `AllowVersionDowngrade`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import semver
from aiohttp import web
from forge_common.conditional import etag_of
from forge_common.keys import DB_POOL
from forge_common.openapi import error, json_content, path_param, query_param
from forge_common.render import dumps

from ..downloads.files import serve_asset
from ..errors import AssetNotFound, NoReleasesFound
from ..keys import STORAGE
from ..models import Asset, Release
from ..openapi.parts import ACCESS_ERRORS, ETAG, NOT_MODIFIED, operation
from ..read.cache import Answer, RepoReleases
from ..read.resolve import resolve
from ..read.update_check import repo_releases
from . import queries
from .channels import staged
from .feed import Counted, Feed, FileRoute, Link, QueryPart, Stepped, Updater
from .nuspec import NOT_VELOPACK, Package, package_of
from .serving import routed_key, serve
from .steps import Steps, running_word, step_of_key, unsaid

PACKAGE = ".nupkg"
DELTA = "-delta.nupkg"
_CHANNEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,255}")
NO_STAGING_ID = "-"
# Velopack's default channels, the OS each is built for (insights' `platform` dimension)
_PLATFORMS = {"win": "windows", "osx": "darwin", "linux": "linux"}


def bucket_of(query: Mapping[str, str]) -> str:
    """The install's staged-rollout bucket, 0-100, from its `stagingId`; `-` without a UUID."""
    try:
        staging_id = uuid.UUID(query.get("stagingId", ""))
    except ValueError:
        return NO_STAGING_ID
    share = int.from_bytes(staging_id.bytes[12:16], "big") / 0xFFFFFFFF
    return str(int(share * 100))


def _takes(release: Release, bucket: str) -> bool:
    """Whether an install in `bucket` is offered `release` (staged rollouts)."""
    percent = staged(release)
    return percent is None or (bucket != NO_STAGING_ID and int(bucket) < percent)


async def packages(app: web.Application, releases: RepoReleases) -> dict[int, Package]:
    """What the `.nuspec` of every `.nupkg` of the published releases says, by asset id: kept
    readings, and the packages not read yet read now (and kept)."""
    assets = [
        asset
        for release in releases.everything
        for asset in release.assets
        if asset.name.lower().endswith(PACKAGE)
    ]
    if not assets:
        return {}
    known = await queries.packages_of(app[DB_POOL], [asset.id for asset in assets])
    for asset in assets:
        if asset.id not in known:
            # the blob is missing from storage (logged where it is served): no package
            known[asset.id] = await _read_and_keep(app, asset) or NOT_VELOPACK
    return known


async def read_at_upload(app: web.Application, asset: Asset) -> None:
    """A just-uploaded `.nupkg`'s `.nuspec`, read from the package's own bytes and kept; the feed
    reads any package not kept yet (uploaded by an older forge, loaded from a world file, or
    while the storage could not be read back)."""
    if asset.name.lower().endswith(PACKAGE):
        await _read_and_keep(app, asset)


async def _read_and_keep(app: web.Application, asset: Asset) -> Package | None:
    read = await package_of(app[STORAGE], asset.sha256, asset.size)
    if read is not None:
        await queries.keep_package(app[DB_POOL], asset.id, read)
    return read


def _entry(kind: str, asset: Asset, package: Package, version: semver.Version) -> dict[str, Any]:
    return {
        "PackageId": package.package_id,
        "Version": str(version),
        "Type": kind,
        "FileName": asset.name,
        "SHA1": asset.sha1.upper(),
        "SHA256": asset.sha256.upper(),
        "Size": asset.size,
        "NotesMarkdown": package.notes_markdown,
        "NotesHtml": package.notes_html,
    }


Found = tuple[semver.Version, str, Release, Asset, Package]


def _of_channel(releases: RepoReleases, known: Mapping[int, Package], channel: str) -> list[Found]:
    """(version, Full or Delta, release, asset, package) of the channel's packages, newest
    release first, one of each version and kind."""
    found: list[Found] = []
    seen: set[tuple[semver.Version, str]] = set()
    for release in releases.everything:
        for asset in release.assets:
            package = known.get(asset.id, NOT_VELOPACK)
            if not package.velopack or package.channel != channel:
                continue
            kind = "Delta" if asset.name.lower().endswith(DELTA) else "Full"
            version = semver.Version.parse(package.version)
            if (version, kind) not in seen:
                seen.add((version, kind))
                found.append((version, kind, release, asset, package))
    return found


def required_steps(releases: RepoReleases, known: Mapping[int, Package], channel: str) -> Steps:
    """The versions of the channel's Full packages whose release is a required step."""
    found = _of_channel(releases, known, channel)
    return tuple(
        sorted({v for v, kind, release, *_ in found if kind == "Full" and release.required})
    )


def assets(
    releases: RepoReleases,
    known: Mapping[int, Package],
    channel: str,
    bucket: str,
    step: semver.Version | None = None,
) -> list[dict[str, Any]]:
    """The feed's `Assets`, newest version first, Full before Delta; none above `step`."""
    found = _of_channel(releases, known, channel)
    versions = sorted({version for version, *_ in found})
    offered = [
        item for item in found if _takes(item[2], bucket) and (step is None or item[0] <= step)
    ]
    fulls = {version for version, kind, *_ in offered if kind == "Full"}
    listed = []
    for version, kind, _, asset, package in offered:
        if kind == "Delta":
            # the version below it among every package of the channel (staged ones included: a
            # delta is built against it) must be offered as a Full, or the delta cannot apply
            below = [other for other in versions if other < version]
            if not below or below[-1] not in fulls:
                continue
        listed.append((version, kind == "Delta", _entry(kind, asset, package, version)))
    listed.sort(key=lambda item: (item[0], not item[1]), reverse=True)
    return [entry for *_, entry in listed]


def feed_body(entries: Sequence[dict[str, Any]]) -> Answer:
    body = dumps({"Assets": list(entries)})
    return Answer(200, body, etag_of(body))


async def velopack_feed(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/velopack/releases.{channel}.json: the channel's packages (200, an
    empty `Assets` when it has none: the client's "no update")."""
    channel = request.match_info["channel"]
    if _CHANNEL.fullmatch(channel) is None:
        raise NoReleasesFound()
    bucket = bucket_of(request.query)
    key = routed_key(FEED, request)

    async def kept_as(releases: RepoReleases, key: str) -> str:
        kept = FEED.kept_key(releases, key)
        if kept is None:  # the steps are read from the packages: found now, then kept
            known = await packages(request.app, releases)
            head = key.rpartition(" ")[0]
            releases.keep_steps(head, required_steps(releases, known, channel.lower()))
            kept = FEED.kept_key(releases, key) or key
        return kept

    async def build(releases: RepoReleases, link: Link) -> Answer:
        known = await packages(request.app, releases)
        step = step_of_key(await kept_as(releases, key))
        return feed_body(assets(releases, known, channel.lower(), bucket, step))

    return await serve(request, key, build, kept_as)


async def velopack_package(request: web.Request) -> web.StreamResponse:
    """GET /{owner}/{repo}/velopack/{file}: a package the feed lists, found by its name among the
    published releases and served as every download is (Range, counting, storage redirects): the
    bytes themselves, or a redirect to a URL that needs no header (Velopack's client drops
    `Authorization` on a redirect)."""
    name = request.match_info["file"]
    if not name or "/" in name or ".." in name or "\x00" in name:
        raise AssetNotFound()
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    for release in releases.everything:
        if any(asset.name == name for asset in release.assets):
            return await serve_asset(request, resolved.ref, release, name, resolved.public)
    raise AssetNotFound()


def _channel_says(channel: str) -> Mapping[str, str]:
    platform = _PLATFORMS.get(channel.lower())
    return {"channel": channel, "platform": platform} if platform else {"channel": channel}


def _nothing(_: str) -> Mapping[str, str]:
    return {}


def _local_version(query: Mapping[str, str]) -> str:
    return running_word(query.get("localVersion", ""))


def _steps_not_read(releases: RepoReleases, parts: Mapping[str, str]) -> Steps | None:
    """None: the steps come from the packages' readings, found by the handler."""
    return None


_ASSET = {
    "type": "object",
    "required": [
        "PackageId",
        "Version",
        "Type",
        "FileName",
        "SHA1",
        "SHA256",
        "Size",
        "NotesMarkdown",
        "NotesHtml",
    ],
    "additionalProperties": False,
    "properties": {
        "PackageId": {"type": "string"},
        "Version": {"type": "string"},
        "Type": {"type": "string", "enum": ["Full", "Delta"]},
        "FileName": {"type": "string"},
        "SHA1": {"type": "string", "pattern": "^[0-9A-F]{40}$"},
        "SHA256": {"type": "string", "pattern": "^[0-9A-F]{64}$"},
        "Size": {"type": "integer"},
        "NotesMarkdown": {"type": "string"},
        "NotesHtml": {"type": "string"},
    },
}
_STAGING_ID = query_param(
    "stagingId",
    {"type": "string"},
    "the install's UUID (Velopack's Rust-based clients send it with localVersion and id, which "
    "is ignored): a staged release is listed for the installs inside its percentage; without "
    "one, held back",
)
_LOCAL_VERSION = query_param(
    "localVersion",
    {"type": "string"},
    "the running version: an install below a required release is given the packages up to "
    "that release only",
)
_KEY = query_param(
    "key",
    {"type": "string", "maxLength": 200},
    "an update key of this repository, for Velopack's .NET client (which keeps the base URL's "
    "query); the others send it as `Authorization: token forge_uk_...`",
)

FEED = Feed(
    name="velopack",
    path="/{owner}/{repo}/velopack/releases.{channel}.json",
    handler=velopack_feed,
    key="velopack {channel}",
    query_parts=(QueryPart("staging", bucket_of), QueryPart("running", _local_version)),
    stepped=Stepped(_steps_not_read),
    counted=Counted({"channel": _channel_says, "staging": _nothing, "running": unsaid}),
    updaters=(Updater("Velopack (its UpdateManager: Windows, macOS, Linux)", (PACKAGE,)),),
    operation=operation(
        "velopackFeed",
        "Velopack's releases.{channel}.json (HttpSource on {APP_URL}{owner}/{repo}/velopack)",
        [
            path_param(
                "channel",
                description="the channel of the packages' .nuspec: win, "
                "osx, linux (vpk's defaults) or any name",
            ),
            _STAGING_ID,
            _LOCAL_VERSION,
            _KEY,
        ],
        {
            "200": json_content(
                "The channel's packages, newest first (empty when it has none)",
                {
                    "type": "object",
                    "required": ["Assets"],
                    "properties": {"Assets": {"type": "array", "items": _ASSET}},
                },
                headers=ETAG,
            ),
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or NoReleasesFound: not a channel name"),
        },
        "feeds",
    ),
)

PACKAGES = FileRoute(
    path="/{owner}/{repo}/velopack/{file}",
    handler=velopack_package,
    operation=operation(
        "velopackPackage",
        "A package a Velopack feed lists, at the feed's base URL + its FileName",
        [path_param("file"), _KEY],
        {
            "200": {"description": "The package's bytes", "headers": ETAG},
            "206": {"description": "The ranges asked for"},
            "302": {"description": "The package in the storage (a presigned URL)"},
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or AssetNotFound: no published release has the file"),
            "416": {"description": "No range asked for is in the file"},
        },
        "downloads",
    ),
)
