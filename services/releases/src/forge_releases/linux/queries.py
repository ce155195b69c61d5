"""SQL of the Linux repositories (migration 0010_linux_repositories.sql): what each `.deb` and
`.rpm` asset says of itself (packages.py), and the instance's OpenPGP keys (keyring.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
from forge_common.db import Queryable, transaction

from ..models import Asset
from ..read.cache import CHANNEL
from ..signing_keys.kinds import OPENPGP
from .packages import LinuxPackage

_FIELDS = "format, name, version, arch, control, primary_xml, filelists_xml, other_xml"


async def packages_of(db: Queryable, asset_ids: Sequence[int]) -> dict[int, LinuxPackage]:
    """The kept reading of each of these assets that has one."""
    rows = await db.fetch(
        f"SELECT asset_id, {_FIELDS} FROM releases.linux_packages"
        " WHERE asset_id = ANY($1::bigint[])",
        list(asset_ids),
    )
    return {row["asset_id"]: LinuxPackage(*(row[f] for f in _FIELDS.split(", "))) for row in rows}


async def keep_package(db: Queryable, asset_id: int, package: LinuxPackage) -> None:
    """Keep the reading of one asset (another replica may have kept the same one first)."""
    await db.execute(
        f"""INSERT INTO releases.linux_packages (asset_id, {_FIELDS})
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS
                  (SELECT 1 FROM releases.assets WHERE id = $1)
           ON CONFLICT (asset_id) DO NOTHING""",
        asset_id,
        package.format,
        package.name,
        package.version,
        package.arch,
        package.control,
        package.primary_xml,
        package.filelists_xml,
        package.other_xml,
    )


async def listed_assets(db: Queryable, repo_id: int, ending: str, stable: bool) -> list[Asset]:
    """The assets named `*{ending}` of every published release of the repository (not only the
    update check's 50 newest: every version stays listed), without prereleases when `stable`,
    without releases staged below 100 %; newest release first, then in attachment order."""
    rows = await db.fetch(
        """SELECT a.id, a.release_id, a.name, a.size, a.content_type, a.sha256,
                  a.uuid::text AS uuid, a.download_count, a.created_at, a.sha1, a.sha512
             FROM releases.assets a JOIN releases.releases r ON r.id = a.release_id
            WHERE r.repo_id = $1 AND NOT r.draft AND NOT r.tag_only
              AND (NOT $2 OR NOT r.prerelease) AND (r.rollout IS NULL OR r.rollout >= 100)
              AND lower(a.name) LIKE '%' || $3
            ORDER BY r.created_at DESC, r.id DESC, a.id""",
        repo_id,
        stable,
        ending,
    )
    return [Asset(**dict(row)) for row in rows]


async def release_of(db: Queryable, repo_id: int, asset_id: int) -> int | None:
    """The published release of the repository that has the asset, if any."""
    found: int | None = await db.fetchval(
        """SELECT r.id FROM releases.assets a JOIN releases.releases r ON r.id = a.release_id
            WHERE a.id = $1 AND r.repo_id = $2 AND NOT r.draft AND NOT r.tag_only""",
        asset_id,
        repo_id,
    )
    return found


# --- the instance's OpenPGP keys -------------------------------------------------------------


async def openpgp_keys(db: Queryable) -> list[dict[str, Any]]:
    """Every OpenPGP key of the instance, the current one first: fingerprint, public_key,
    secret_key, signs_first, updated_at."""
    rows = await db.fetch(
        """SELECT fingerprint, public_key, secret_key, signs_first, updated_at
             FROM releases.signing_keys WHERE kind = $1 AND repo_id IS NULL
            ORDER BY signs_first DESC, updated_at, id""",
        OPENPGP,
    )
    return [dict(row) for row in rows]


async def add_openpgp_key(
    db: Queryable, fingerprint: str, public_key: str, secret_key: str, first: bool
) -> bool:
    """Keep a key (the current one when `first`); False when it is kept already. The caller
    says `changed` when answers may have been signed without it."""
    status: str = await db.execute(
        """INSERT INTO releases.signing_keys
               (repo_id, kind, public_key, secret_key, fingerprint, signs_first)
           VALUES (NULL, $1, $2, $3, $4, $5) ON CONFLICT DO NOTHING""",
        OPENPGP,
        public_key,
        secret_key,
        fingerprint,
        first,
    )
    return status == "INSERT 0 1"


async def promote_openpgp_key(pool: asyncpg.Pool, fingerprint: str) -> bool:
    """Make the key the current one (the others keep signing until retired)."""
    async with transaction(pool) as conn:
        found = await conn.fetchval(
            """SELECT 1 FROM releases.signing_keys WHERE kind = $1 AND fingerprint = $2
                  FOR UPDATE""",
            OPENPGP,
            fingerprint,
        )
        if found is None:
            return False
        await conn.execute(
            "UPDATE releases.signing_keys SET signs_first = false WHERE kind = $1", OPENPGP
        )
        await conn.execute(
            """UPDATE releases.signing_keys SET signs_first = true, updated_at = now()
                WHERE kind = $1 AND fingerprint = $2""",
            OPENPGP,
            fingerprint,
        )
    return True


async def retire_openpgp_key(db: Queryable, fingerprint: str) -> bool:
    """Delete a key that is not the current one; False when there is no such key."""
    status: str = await db.execute(
        """DELETE FROM releases.signing_keys
            WHERE kind = $1 AND fingerprint = $2 AND NOT signs_first""",
        OPENPGP,
        fingerprint,
    )
    return status == "DELETE 1"


async def changed(db: Queryable) -> None:
    """Every replica drops its kept answers: signed metadata names the keys."""
    await db.execute("SELECT pg_notify($1, '*')", CHANNEL)
