"""`forge backup --to DIR` and `forge restore --from DIR`: the database and the asset blobs it
references, consistent with each other (docs/deploy.md "Backup and restore").

A backup folder holds `database.dump` (pg_dump's custom format) and `blobs/` (a folder storage:
each blob at its SHA-256 address). The blobs are copied first, while the service runs; then one
read-only REPEATABLE READ transaction exports its snapshot, reads the digests the assets reference
in it and runs `pg_dump --snapshot` on that same snapshot; then every referenced blob that
arrived after the first copy is copied too. A blob is never changed once at its address, so the
folder ends up holding every blob the dump references; one deleted before it could be copied (its
asset deleted after the snapshot, so gone from the live data too) is counted and the command exits
non-zero. A restore loads the dump into an empty database with pg_restore, then copies the blobs
into the configured storage, each verified against its address.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from forge_common.config import ConfigError
from forge_common.db import connect
from forge_common.embedded_pg import find_bindir

from ..publish.queries import referenced_blobs
from .base import BlobMissing, Storage
from .folder import FolderStorage
from .migrate import MigrateReport, copy_blob, migrate

DUMP = "database.dump"
BLOBS = "blobs"


class BackupError(RuntimeError):
    pass


@dataclass(slots=True)
class BackupReport:
    blobs: MigrateReport
    referenced: int = 0
    late: int = 0  # referenced blobs copied after the snapshot
    missing: list[str] = field(default_factory=list)


def pg_tool(name: str) -> str:
    """pg_dump or pg_restore: on the PATH, else beside the machine's PostgreSQL."""
    found = shutil.which(name)
    if found:
        return found
    bindir = find_bindir()
    if bindir is not None and (bindir / name).exists():
        return str(bindir / name)
    raise ConfigError(f"{name} not found: install PostgreSQL's client tools (the server's version)")


async def _run(*argv: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        said = (err or out).decode(errors="replace").strip()
        raise BackupError(f"{Path(argv[0]).name} failed: {said}")


def _new_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / DUMP).exists():
        raise BackupError(f"{folder} already holds a backup: choose a new folder")


async def backup(database_url: str, storage: Storage, folder: Path) -> BackupReport:
    await asyncio.to_thread(_new_folder, folder)
    target = FolderStorage(folder / BLOBS)
    try:
        report = BackupReport(await migrate(storage, target))  # the bulk, while serving
        conn = await connect(database_url)
        try:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                snapshot = await conn.fetchval("SELECT pg_export_snapshot()")
                referenced = await referenced_blobs(conn)
                partial = folder / f"{DUMP}.partial"
                await _run(
                    pg_tool("pg_dump"),
                    "--format=custom",
                    f"--snapshot={snapshot}",
                    f"--file={partial}",
                    f"--dbname={database_url}",
                )
                await asyncio.to_thread(partial.rename, folder / DUMP)
        finally:
            await conn.close()
        report.referenced = len(referenced)
        for digest in referenced:
            if await target.exists(digest):
                continue
            try:
                copied = await copy_blob(storage, target, digest)
            except BlobMissing:
                copied = None
            if copied is None:
                report.missing.append(digest)
            else:
                report.late += 1
        return report
    finally:
        await target.close()


async def restore(database_url: str, storage: Storage, folder: Path) -> MigrateReport:
    if not await asyncio.to_thread((folder / DUMP).exists):
        raise BackupError(f"{folder} holds no {DUMP}: not a backup of `forge backup`")
    conn = await connect(database_url)
    try:
        used = await conn.fetchval("SELECT to_regclass('public.forge_migrations') IS NOT NULL")
    finally:
        await conn.close()
    if used:
        raise BackupError("the database is not empty: restore into a new, empty database")
    await _run(
        pg_tool("pg_restore"),
        "--exit-on-error",
        "--no-owner",
        "--no-privileges",
        f"--dbname={database_url}",
        str(folder / DUMP),
    )
    source = FolderStorage(folder / BLOBS)
    try:
        return await migrate(source, storage)
    finally:
        await source.close()
