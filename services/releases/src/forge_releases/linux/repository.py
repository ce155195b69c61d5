"""What the apt and dnf repositories of one forge repository hold, and the keys that sign them.

A channel's packages: `stable` lists the `.deb`/`.rpm` of every published release that is not a
prerelease, `beta` (any other name) of every published release, prereleases too (the update
check's channels, feeds/channels.py). Every version stays listed (`apt install app=1.0.0` and
downgrades work), however many releases there are (not only the update check's 50 newest
candidates); drafts never, and a release in a staged rollout below 100 % is
held back (a package manager sends no staging id, as Squirrel.Mac's and Tauri's feeds hold it).

The instance's OpenPGP keys (signing_keys/kinds.py `OPENPGP`) live in releases.signing_keys: the
first request that needs one generates it (under an advisory lock, so replicas starting together
make one), unless the operator gave one (`forge linux-key add --secret-key FILE`). Every kept key
signs (a rotation: docs/releases.md "Rotating the OpenPGP key").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from aiohttp import web
from forge_common.db import transaction
from forge_common.keys import DB_POOL

from ..keys import STORAGE
from ..models import Asset
from ..read.cache import RepoReleases
from ..read.update import STABLE
from . import queries
from .openpgp import Keyring
from .packages import ENDINGS, NOT_A_PACKAGE, LinuxPackage, format_of, read_package

KEYRING = web.AppKey("releases_openpgp_keyring", Keyring)
_GENERATE_LOCK = hashlib.sha256(b"forge openpgp key").digest()[:8]
USER_ID = "forge package repositories"


@dataclass(frozen=True, slots=True)
class Listed:
    asset: Asset
    package: LinuxPackage


async def packages(
    app: web.Application, releases: RepoReleases, channel: str, fmt: str
) -> list[Listed]:
    """The channel's packages of one format (packages.DEB or RPM), newest release first: kept
    readings, and the assets not read yet read now (and kept). `releases` says which repository
    (the answer is kept with it, and dropped with it on publish); every published release is
    read from the database, not only the update check's newest candidates."""
    pool = releases.everything or releases.stable
    if not pool:
        return []
    db = app[DB_POOL]
    ending = next(end for end, kind in ENDINGS.items() if kind == fmt)
    found = await queries.listed_assets(db, pool[0].repo_id, ending, channel == STABLE)
    if not found:
        return []
    known = await queries.packages_of(db, [asset.id for asset in found])
    listed = []
    for asset in found:
        package = known.get(asset.id)
        if package is None:
            package = await read_package(app[STORAGE], asset.sha256, asset.size, fmt)
            if package is None:  # the blob is missing from storage: logged where it is served
                continue
            await queries.keep_package(db, asset.id, package)
        if package.format == fmt:
            listed.append(Listed(asset, package))
    return listed


async def read_at_upload(app: web.Application, asset: Asset) -> LinuxPackage | None:
    """Read and keep a just-uploaded asset's package metadata (None: not a candidate)."""
    fmt = format_of(asset.name)
    if fmt is None:
        return None
    package = await read_package(app[STORAGE], asset.sha256, asset.size, fmt)
    if package is None:
        return None
    await queries.keep_package(app[DB_POOL], asset.id, package)
    return package if package is not NOT_A_PACKAGE else None


async def signing_keys(app: web.Application) -> list[str]:
    """The fingerprints of the keys that sign, the current one first, imported into this
    process's keyring; the first call on a new instance generates its key."""
    db = app[DB_POOL]
    rows = await queries.openpgp_keys(db)
    if not rows:
        async with transaction(db) as conn:
            await conn.execute(
                "SELECT pg_advisory_xact_lock($1)",
                int.from_bytes(_GENERATE_LOCK, "big", signed=True),
            )
            if not await queries.openpgp_keys(conn):
                fingerprint, public, secret = await app[KEYRING].generate(USER_ID)
                await queries.add_openpgp_key(conn, fingerprint, public, secret, True)
        rows = await queries.openpgp_keys(db)
    await app[KEYRING].ensure([(row["fingerprint"], row["secret_key"]) for row in rows])
    return [row["fingerprint"] for row in rows]


async def public_keys(app: web.Application, *, armor: bool) -> bytes:
    """Every signing key's public key, as one keyring (`key.asc` armored, `key.gpg` binary)."""
    fingerprints: Sequence[str] = await signing_keys(app)
    return await app[KEYRING].public_keys(fingerprints, armor=armor)
