"""Migrations: idempotent, recorded, refused when edited, safe when two run at once."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from forge_common.db import connect
from forge_common.migrations import MigrationError, migrate
from forge_common.service import all_migrations, installed_services


async def test_the_test_database_is_fully_migrated(db):
    expected = all_migrations(installed_services())
    rows = await db.fetch("SELECT schema, version FROM public.forge_migrations")
    assert {(r["schema"], r["version"]) for r in rows} == {(m.schema, m.version) for m in expected}
    assert await db.fetchval("SELECT to_regclass('core.accounts')") is not None


async def test_migrating_again_applies_nothing(db):
    assert await migrate(db, all_migrations(installed_services())) == []


async def test_two_migrations_at_once_apply_each_file_once(pg_server_url, database_url):
    # A fresh, empty database: both runners race to apply everything.
    conn = await connect(pg_server_url)
    try:
        await conn.execute('CREATE DATABASE "forge_race"')
    finally:
        await conn.close()
    url = database_url.rsplit("/", 1)[0] + "/forge_race"
    migrations = all_migrations(installed_services())
    first, second = await connect(url), await connect(url)
    try:
        results = await asyncio.gather(migrate(first, migrations), migrate(second, migrations))
        assert sorted(len(r) for r in results) == [0, len(migrations)]
        count = await first.fetchval("SELECT count(*) FROM public.forge_migrations")
        assert count == len(migrations)
    finally:
        await first.close()
        await second.close()
        conn = await connect(pg_server_url)
        await conn.execute('DROP DATABASE "forge_race" WITH (FORCE)')
        await conn.close()


async def test_an_applied_migration_that_was_edited_is_refused(db):
    migrations = all_migrations(installed_services())
    edited = [replace(migrations[0], sql=migrations[0].sql + "\n-- edited")]
    with pytest.raises(MigrationError, match="was changed after it was applied"):
        await migrate(db, edited)
