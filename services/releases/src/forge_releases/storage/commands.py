"""`forge storage migrate --to URL` and `forge storage sweep`: server-side maintenance of the asset
storage (storage/migrate.py, storage/sweep.py), run where the service's settings are."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forge_common.config import ConfigError, Settings
from forge_common.db import create_pool
from forge_common.units import human_size

from ..publish.queries import referenced_blobs
from . import StorageUnavailable, open_storage, storage_at
from .backup import BLOBS, DUMP, BackupError, backup, restore
from .migrate import migrate
from .sweep import sweep

MISSING_LISTED = 20  # digests named on stderr; the count says how many in all


def add_storage_commands(commands: Any) -> None:
    storage = commands.add_parser("storage", help="maintain the asset storage (server side)")
    actions = storage.add_subparsers(dest="storage_command", required=True)
    move = actions.add_parser(
        "migrate",
        help="copy every blob to another backend (resumable, verified)",
        description="Copies from the configured storage (STORAGE_URL / STORAGE_PATH) to --to; "
        "blobs already there are skipped, so it can be run again after an interruption.",
    )
    move.add_argument(
        "--to", required=True, metavar="URL", help="file:///path or s3://bucket/prefix"
    )
    move.set_defaults(handler=run_migrate)
    clean = actions.add_parser(
        "sweep",
        help="delete blobs no asset references (safe while the service runs)",
        description="Uses DATABASE_URL and the configured storage.",
    )
    clean.set_defaults(handler=run_sweep)
    save = commands.add_parser(
        "backup",
        help="the database and the asset blobs it references, consistent (docs/deploy.md)",
        description="pg_dump of DATABASE_URL and a copy of the configured storage's blobs into "
        "a new folder, consistent with each other; safe while the services run.",
    )
    save.add_argument("--to", required=True, type=Path, metavar="DIR", help="a new folder")
    save.set_defaults(handler=run_backup)
    load = commands.add_parser(
        "restore",
        help="a `forge backup` folder into an empty database and the configured storage",
    )
    load.add_argument("--from", required=True, type=Path, metavar="DIR", dest="source")
    load.set_defaults(handler=run_restore)


def run_migrate(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _run(lambda settings: _migrate(settings, args.to), env)


def run_sweep(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _run(_sweep, env)


def run_backup(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _run(lambda settings: _backup(settings, args.to), env)


def run_restore(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    return _run(lambda settings: _restore(settings, args.source), env)


def _run(action: Any, env: Mapping[str, str]) -> int:
    try:
        result: int = asyncio.run(action(Settings.from_env(env)))
    except (ConfigError, StorageUnavailable, BackupError) as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    return result


async def _migrate(settings: Settings, to: str) -> int:
    pool = await create_pool(settings.database_url, max_size=1)  # one statement at a time
    try:
        referenced = await referenced_blobs(pool)
    finally:
        await pool.close()
    source, target = open_storage(settings), storage_at(to, settings)
    try:
        report = await migrate(source, target, referenced=referenced)
    finally:
        await source.close()
        await target.close()
    size = human_size(report.copied_bytes)
    print(
        f"forge: {report.copied} blob(s) copied ({size}), {report.skipped} already at "
        f"{target.url}, {len(report.failed)} not matching their SHA-256, "
        f"{len(report.missing)} referenced by an asset but in neither store"
    )
    for digest in report.failed:
        print(f"  not copied (bytes do not match the address): {digest}", file=sys.stderr)
    for digest in report.missing[:MISSING_LISTED]:
        print(f"  missing (referenced, in neither store): {digest}", file=sys.stderr)
    if report.missing:
        print(
            f"forge: {len(report.missing)} referenced blob(s) were not in the source "
            f"({source.url}): is STORAGE_URL/STORAGE_PATH the store the service uses?",
            file=sys.stderr,
        )
    return 1 if report.failed or report.missing else 0


async def _backup(settings: Settings, folder: Path) -> int:
    storage = open_storage(settings)
    try:
        report = await backup(settings.database_url, storage, folder)
    finally:
        await storage.close()
    blobs = report.blobs
    print(
        f"forge: backed up the database to {folder / DUMP} and {report.referenced} referenced "
        f"blob(s) to {folder / BLOBS} ({blobs.copied + report.late} copied, "
        f"{blobs.copied_bytes / 2**20:.1f} MiB before the snapshot)"
    )
    for digest in report.missing:
        print(f"  missing (referenced, gone from storage): {digest}", file=sys.stderr)
    for digest in blobs.failed:
        print(f"  not copied (bytes do not match the address): {digest}", file=sys.stderr)
    return 1 if report.missing or blobs.failed else 0


async def _restore(settings: Settings, folder: Path) -> int:
    storage = open_storage(settings)
    try:
        report = await restore(settings.database_url, storage, folder)
    finally:
        await storage.close()
    print(
        f"forge: restored {folder / DUMP} and {report.copied} blob(s) "
        f"({report.skipped} already in storage) to {storage.url}"
    )
    for digest in report.failed:
        print(f"  not restored (bytes do not match the address): {digest}", file=sys.stderr)
    return 1 if report.failed else 0


async def _sweep(settings: Settings) -> int:
    storage = open_storage(settings)
    pool = await create_pool(settings.database_url, max_size=1)  # one statement at a time
    try:
        report = await sweep(storage, pool)
    finally:
        await pool.close()
        await storage.close()
    print(f"forge: {report.checked} blob(s) checked, {report.deleted} unreferenced deleted")
    return 0
