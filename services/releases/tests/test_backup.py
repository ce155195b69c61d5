"""`forge backup --to DIR` and `forge restore --from DIR` (docs/deploy.md "Backup and restore"):
a round trip with data in place, from a database and its asset storage to a new empty database
and a new storage, where the releases, the accounts and every download's bytes are back."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import os
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from forge_common.cli import main
from forge_common.config import Settings
from forge_releases.service import create_app
from forge_releases.storage import FolderStorage
from forge_testing.plugin import with_database

from .publish_support import api, auth, publish_world

_names = itertools.count()
BIG = 3_000_000


async def forge(argv: list[str], env: dict[str, str], capsys: Any) -> tuple[int, str, str]:
    status = await asyncio.to_thread(main, argv, env)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
async def empty_database(pg_server_url: str):
    name = f"forge_restore_{os.getpid()}_{next(_names)}"
    admin = await asyncpg.connect(pg_server_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield with_database(pg_server_url, name)
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def _env(settings: Settings) -> dict[str, str]:
    return {
        "DATABASE_URL": settings.database_url,
        "STORAGE_PATH": str(settings.storage_path),
        "LOG_LEVEL": "ERROR",
    }


async def test_a_backup_restored_into_an_empty_database_serves_the_same_releases(
    settings: Settings,
    load: Any,
    empty_database: str,
    aiohttp_client: Any,
    capsys: Any,
    tmp_path: Path,
) -> None:
    world = publish_world()
    world["repos"][0]["releases"][0]["assets"].append({"name": "big.bin", "size": BIG})
    await load(world)
    before = await aiohttp_client(create_app(settings))
    listed = await (await before.get(api("owner/pub"), headers=auth("writer"))).json()
    big = await (await before.get("/owner/pub/releases/download/v1.0.0/big.bin")).read()
    assert len(big) == BIG

    backup = tmp_path / "backup"
    status, out, err = await forge(["backup", "--to", str(backup)], _env(settings), capsys)
    assert status == 0, err
    stored = {d async for d in FolderStorage(settings.storage_path).digests()}
    assert {d async for d in FolderStorage(backup / "blobs").digests()} == stored
    again, _, err = await forge(["backup", "--to", str(backup)], _env(settings), capsys)
    assert again == 1 and "already holds a backup" in err  # never over a backup

    restored = dataclasses.replace(
        settings, database_url=empty_database, storage_path=tmp_path / "restored-storage"
    )
    status, out, err = await forge(["restore", "--from", str(backup)], _env(restored), capsys)
    assert status == 0, err
    assert f"{len(stored)} blob(s)" in out
    after = await aiohttp_client(create_app(restored))
    assert await (await after.get(api("owner/pub"), headers=auth("writer"))).json() == listed
    reply = await after.get("/owner/pub/releases/download/v1.0.0/big.bin")
    assert hashlib.sha256(await reply.read()).digest() == hashlib.sha256(big).digest()

    # a second restore into the now used database is refused, touching nothing
    status, _, err = await forge(["restore", "--from", str(backup)], _env(restored), capsys)
    assert status == 1 and "not empty" in err
