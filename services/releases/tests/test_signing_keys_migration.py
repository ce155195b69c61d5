"""Migration 0008 moves Tauri public keys into the one table of signing keys
(releases.signing_keys, signing_keys/kinds.py) on a database that already holds them, as an
upgrade does: every key stays its repository's, with who set it and when, and reads back through
the same queries the API uses; the old table is gone; a repository still holds one key per kind."""

from __future__ import annotations

import asyncpg
import pytest
from forge_common.db import connect
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_releases.signing_keys import queries
from forge_releases.signing_keys.kinds import TAURI

from .minisign_support import Signer


async def test_tauri_keys_move_to_signing_keys_with_their_data(
    pg_server_url: str, database_url: str
) -> None:
    name = "forge_releases_signing_keys_upgrade"
    admin = await connect(pg_server_url)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url.rsplit("/", 1)[0] + "/" + name
    everything = all_migrations(installed_services())
    before = [m for m in everything if not (m.schema == "releases" and m.version >= 8)]
    signer = Signer.new()
    conn = await connect(url)
    try:
        await migrate(conn, before)
        repos = await conn.fetch(
            """WITH o AS (INSERT INTO core.accounts (kind, name) VALUES ('user', 'owner')
                          RETURNING id)
               INSERT INTO core.repositories (owner_id, name)
               SELECT id, r FROM o, unnest(ARRAY['app', 'other']) AS r RETURNING id, owner_id"""
        )
        app, other = (row["id"] for row in repos)
        await conn.execute(
            """INSERT INTO releases.tauri_keys (repo_id, public_key, updated_by, updated_at)
               VALUES ($1, $2, $3, '2026-03-01T10:00:00Z')""",
            app,
            signer.line,
            repos[0]["owner_id"],
        )
        # up to 0008 (later migrations are tested on their own)
        through_8 = [m for m in everything if not (m.schema == "releases" and m.version > 8)]
        applied = await migrate(conn, through_8)
        assert [(m.schema, m.version) for m in applied] == [("releases", 8)]
        assert await conn.fetchval("SELECT to_regclass('releases.tauri_keys')") is None

        row = await queries.key_of(conn, app, TAURI.name)
        assert row is not None
        assert (row["public_key"], row["updated_by"]) == (signer.line, "owner")
        assert row["updated_at"].isoformat() == "2026-03-01T10:00:00+00:00"
        assert TAURI.parse(row["public_key"]).shown["public_key"] == signer.tauri_form
        assert await queries.key_of(conn, other, TAURI.name) is None
        # one key per kind: setting it again replaces it, and the key line is still checked
        await queries.set_key(conn, app, TAURI.name, signer.line, repos[0]["owner_id"])
        assert await conn.fetchval("SELECT count(*) FROM releases.signing_keys") == 1
        with pytest.raises(asyncpg.CheckViolationError):
            await queries.set_key(conn, other, TAURI.name, "RWshort", repos[0]["owner_id"])
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
