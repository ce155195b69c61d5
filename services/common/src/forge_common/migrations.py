"""Forward-only SQL migrations: numbered files per schema, applied in order under an advisory lock
and recorded with a checksum, so two `forge db migrate` at once are safe and an edited applied
migration is refused instead of silently diverging."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import asyncpg

from .db import Queryable

log = logging.getLogger(__name__)

# Any constant works; it only has to be the same in every process that migrates this database.
ADVISORY_LOCK_KEY = 0x666F726765  # "forge"
_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Migration:
    schema: str
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(schema: str, package: str) -> list[Migration]:
    """The migrations of one schema: files `NNNN_name.sql` in the importable `package`."""
    found = []
    for entry in resources.files(package).iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found.append(
                Migration(schema, int(match[1]), match[2], entry.read_text(encoding="utf-8"))
            )
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migrations of schema {schema} share a number")
    return found


async def applied(conn: asyncpg.Connection[Any]) -> dict[tuple[str, int], str]:
    rows = await conn.fetch("SELECT schema, version, checksum FROM public.forge_migrations")
    return {(row["schema"], row["version"]): row["checksum"] for row in rows}


async def pending(conn: Queryable, migrations: Iterable[Migration]) -> list[Migration]:
    """What of `migrations` this database has not applied yet (all of it when never migrated):
    the schema is at the version the code expects when this is empty."""
    try:
        rows = await conn.fetch("SELECT schema, version FROM public.forge_migrations")
    except asyncpg.UndefinedTableError:
        return list(migrations)
    done = {(row["schema"], row["version"]) for row in rows}
    return [m for m in migrations if (m.schema, m.version) not in done]


async def migrate(
    conn: asyncpg.Connection[Any], migrations: Iterable[Migration]
) -> list[Migration]:
    """Apply what is pending, each migration in its own transaction; returns what was applied."""
    pending: list[Migration] = []
    await conn.execute("SELECT pg_advisory_lock($1)", ADVISORY_LOCK_KEY)
    try:
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS public.forge_migrations (
                   schema text NOT NULL,
                   version integer NOT NULL,
                   name text NOT NULL,
                   checksum text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now(),
                   PRIMARY KEY (schema, version))"""
        )
        done = await applied(conn)
        for migration in migrations:
            key = (migration.schema, migration.version)
            if key in done:
                if done[key] != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.schema}/{migration.version:04d}_{migration.name} "
                        "was changed after it was applied; add a new migration instead"
                    )
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO public.forge_migrations (schema, version, name, checksum) "
                    "VALUES ($1, $2, $3, $4)",
                    migration.schema,
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            log.info("applied migration %s/%04d_%s", *key, migration.name)
            pending.append(migration)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", ADVISORY_LOCK_KEY)
    return pending


def ordered(groups: Sequence[list[Migration]]) -> list[Migration]:
    """Schemas in the given order (core first), each schema's files by number."""
    return [m for group in groups for m in group]
