"""The apt repository of a forge repository at `{APP_URL}{owner}/{repo}/apt/` (docs/releases.md
"Linux package repositories"): `dists/{stable,beta}/` with `Release`, `InRelease` (signed inline),
`Release.gpg` (detached) and `main/binary-{arch}/Packages(.gz)`, made from the `.deb` assets'
own control stanzas (repository.py), and the packages under `pool/{asset id}/{name}`.

`Release` names the architectures that have a package, says `Acquire-By-Hash: yes` (the indexes
are also served under `by-hash/SHA256/{digest}`, so a client never pairs an old `Packages` with a
new `Release`), and carries `Date` and `Valid-Until`: metadata is dated at the start of the
current day (UTC; so every replica makes the same `Release`) and valid for a week; each replica
drops its kept `Release` answers when a day starts (`resign_daily`), so they are signed again
every day without any publish. (The day is not part of the kept answer's key: the lane before
routing remembers each request target's key, forge_common.fast_path.)"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from email.utils import formatdate

from aiohttp import web
from forge_common import tasks
from forge_common.conditional import etag_of
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL

from ..downloads.files import serve_asset
from ..errors import AssetNotFound, NoReleasesFound
from ..feeds.feed import Counted, Feed, FileRoute, Updater
from ..feeds.serving import routed_key, serve
from ..keys import RELEASE_CACHE
from ..read.cache import Answer, RepoReleases
from ..read.queries import release_by_id
from ..read.resolve import resolve
from ..read.update_check import repo_releases
from .openapi import file_operation, metadata_operation
from .packages import DEB, pool_path
from .queries import release_of
from .repository import KEYRING, Listed, packages, public_keys, signing_keys

CHANNELS = ("stable", "beta")
ARCHES = ("amd64", "arm64", "armhf", "i386")
RELEASE_FILES = ("InRelease", "Release", "Release.gpg")
INDEXES = ("Packages", "Packages.gz")
DAY = 86_400
VALID_DAYS = 7
TEXT = "text/plain; charset=utf-8"
GZIP = "application/gzip"
PGP = "application/pgp-signature"


def today() -> int:
    """The day (UTC, days since the epoch) whose metadata is made now."""
    return int(time.time()) // DAY


def until_tomorrow(now: float) -> float:
    """Seconds from `now` to the start of the next UTC day."""
    return DAY - now % DAY


async def resign_daily(app: web.Application) -> AsyncIterator[None]:
    """A cleanup context: when each UTC day starts, this replica drops its kept `InRelease`,
    `Release` and `Release.gpg` answers, so the next request dates and signs them again."""

    async def run() -> None:
        while True:
            await asyncio.sleep(until_tomorrow(time.time()) + 1)
            app[RELEASE_CACHE].drop_answers(f"feed {RELEASE.kind} ")

    task = asyncio.create_task(run(), name="releases-apt-resign")
    yield
    await tasks.stop(task)


def stanza(item: Listed) -> str:
    """One package's paragraph of `Packages`: its own control fields, then where and what the
    stored file is."""
    asset = item.asset
    return (
        item.package.control
        + f"Filename: {pool_path(asset.id, asset.name)}\n"
        + f"Size: {asset.size}\nSHA1: {asset.sha1}\nSHA256: {asset.sha256}\n"
    )


def _for_arch(items: Sequence[Listed], arch: str) -> list[Listed]:
    return [item for item in items if item.package.arch in (arch, "all")]


def architectures(items: Sequence[Listed]) -> list[str]:
    """Every architecture with a package (`all` packages alone: the usual four)."""
    named = {item.package.arch for item in items} - {"all"}
    if not named and items:
        named = set(ARCHES)
    return sorted(named)


def index(items: Sequence[Listed], arch: str) -> dict[str, bytes]:
    """`Packages` and `Packages.gz` of one architecture (gzip without a time: the same bytes on
    every replica, so the digests in `Release` match whichever replica serves them)."""
    text = "\n".join(stanza(item) for item in _for_arch(items, arch)).encode()
    return {"Packages": text, "Packages.gz": gzip.compress(text, mtime=0)}


def release_text(name: str, channel: str, items: Sequence[Listed], day: int) -> bytes:
    """The `Release` file of a channel, dated at the start of `day`."""
    lines = []
    for arch in architectures(items):
        for file, data in index(items, arch).items():
            digest = hashlib.sha256(data).hexdigest()
            lines.append(f" {digest} {len(data):>8} main/binary-{arch}/{file}")
    fields = [
        f"Origin: {name}",
        f"Label: {name}",
        f"Suite: {channel}",
        f"Codename: {channel}",
        f"Date: {formatdate(day * DAY, usegmt=True)}",
        f"Valid-Until: {formatdate((day + VALID_DAYS) * DAY, usegmt=True)}",
        f"Architectures: {' '.join(architectures(items))}",
        "Components: main",
        "Acquire-By-Hash: yes",
        f"Description: {name} ({channel}), from forge",
        "SHA256:",
        *lines,
    ]
    return ("\n".join(fields) + "\n").encode()


def _channel(request: web.Request) -> str:
    channel = request.match_info["channel"]
    if channel not in CHANNELS:
        raise NoReleasesFound()
    return channel


def _answer(body: bytes, content_type: str) -> Answer:
    return Answer(200, body, etag_of(body), content_type)


async def release_file(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/apt/dists/{channel}/{InRelease,Release,Release.gpg}."""
    channel, file = _channel(request), request.match_info["file"]
    if file not in RELEASE_FILES:
        raise NoReleasesFound()
    name = f"{request.match_info['owner']}/{request.match_info['repo']}"

    async def build(releases: RepoReleases, _: object) -> Answer:
        items = await packages(request.app, releases, channel, DEB)
        text = release_text(name, channel, items, today())
        if file == "Release":
            return _answer(text, TEXT)
        keys = await signing_keys(request.app)
        if file == "InRelease":
            return _answer(await request.app[KEYRING].clearsign(text, keys), TEXT)
        return _answer(await request.app[KEYRING].detach_sign(text, keys), PGP)

    return await serve(request, routed_key(RELEASE, request), build)


def _arch(request: web.Request) -> str:
    arch = request.match_info["arch"]
    if arch not in ARCHES:
        raise NoReleasesFound()
    return arch


async def packages_file(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/apt/dists/{channel}/main/binary-{arch}/{Packages,Packages.gz}."""
    channel, arch, file = _channel(request), _arch(request), request.match_info["file"]
    if file not in INDEXES:
        raise NoReleasesFound()

    async def build(releases: RepoReleases, _: object) -> Answer:
        items = await packages(request.app, releases, channel, DEB)
        return _answer(index(items, arch)[file], TEXT if file == "Packages" else GZIP)

    return await serve(request, routed_key(PACKAGES, request), build)


async def by_hash(request: web.Request) -> web.Response:
    """GET .../binary-{arch}/by-hash/SHA256/{digest}: the index with that digest."""
    channel, arch, digest = _channel(request), _arch(request), request.match_info["digest"]
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    items = await packages(request.app, releases, channel, DEB)
    for file, data in index(items, arch).items():
        if hashlib.sha256(data).hexdigest() == digest:
            answer = _answer(data, TEXT if file == "Packages" else GZIP)
            return answer.respond(request, resolved.public)
    raise AssetNotFound()


async def key_file(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/apt/key.asc (armored) or key.gpg (binary, for apt before 1.4)."""
    file = request.match_info["file"]
    if file not in ("key.asc", "key.gpg"):
        raise AssetNotFound()
    resolved = await resolve(request)
    body = await public_keys(request.app, armor=file == "key.asc")
    answer = _answer(body, "application/pgp-keys")
    return answer.respond(request, resolved.public)


async def pool_file(request: web.Request) -> web.StreamResponse:
    """GET /{owner}/{repo}/apt/pool/{asset_id}/{file} (and the rpm repository's): a listed
    package, served as every download is (Range, counting, storage redirects)."""
    raw_id, name = request.match_info["asset_id"], request.match_info["file"]
    resolved = await resolve(request)
    asset_id = positive_int64(raw_id) if raw_id.isdigit() else None
    db = request.app[DB_POOL]
    release_id = None if asset_id is None else await release_of(db, resolved.ref.repo_id, asset_id)
    release = (
        None if release_id is None else await release_by_id(db, resolved.ref.repo_id, release_id)
    )
    if release is None or not any(a.id == asset_id and a.name == name for a in release.assets):
        raise AssetNotFound()
    return await serve_asset(request, resolved.ref, release, name, resolved.public)


def _nothing(_: str) -> Mapping[str, str]:
    return {}


_LINUX = {"platform": "linux"}
APT = Updater("apt (Debian, Ubuntu: a signed apt repository)", (".deb",))

RELEASE = Feed(
    name="apt",
    path="/{owner}/{repo}/apt/dists/{channel}/{file}",
    handler=release_file,
    key="apt {channel} {file}",
    counted=Counted({"channel": "channel", "file": _nothing}, _LINUX),
    updaters=(APT,),
    operation=metadata_operation(
        "aptRelease",
        "An apt repository's InRelease (signed inline), Release or Release.gpg (detached)",
        ["channel", "file"],
    ),
)
PACKAGES = Feed(
    name="apt",
    path="/{owner}/{repo}/apt/dists/{channel}/main/binary-{arch}/{file}",
    handler=packages_file,
    key="apt-packages {channel} {arch} {file}",
    counted=Counted({"channel": "channel", "arch": "arch", "file": _nothing}, _LINUX),
    operation=metadata_operation(
        "aptPackages",
        "An apt repository's Packages or Packages.gz of one architecture",
        ["channel", "arch", "file"],
    ),
)
FILES = (
    FileRoute(
        "/{owner}/{repo}/apt/dists/{channel}/main/binary-{arch}/by-hash/SHA256/{digest}",
        by_hash,
        file_operation(
            "aptByHash",
            "A Packages index by its SHA-256 (Acquire-By-Hash)",
            ["channel", "arch", "digest"],
        ),
    ),
    FileRoute(
        "/{owner}/{repo}/apt/pool/{asset_id}/{file}",
        pool_file,
        file_operation("aptPool", "A package the apt repository lists", ["asset_id", "file"]),
    ),
    FileRoute(
        "/{owner}/{repo}/apt/{file}",
        key_file,
        file_operation("aptKey", "The signing keys: key.asc (armored) or key.gpg", ["file"]),
    ),
)
