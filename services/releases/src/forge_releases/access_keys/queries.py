"""SQL of update keys (migration 0004_update_keys.sql)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
from forge_common.db import Queryable


async def create_key(
    conn: Queryable, repo_id: int, name: str, digest: bytes, creator_id: int
) -> asyncpg.Record:
    row: asyncpg.Record | None = await conn.fetchrow(
        """INSERT INTO releases.update_keys (repo_id, name, key_sha256, creator_id)
           VALUES ($1, $2, $3, $4) RETURNING id, name, created_at""",
        repo_id,
        name,
        digest,
        creator_id,
    )
    assert row is not None  # INSERT … RETURNING always returns the row
    return row


async def list_keys(pool: asyncpg.Pool, repo_id: int) -> list[dict[str, Any]]:
    rows = await pool.fetch(
        """SELECT k.id, k.name, k.created_at, k.last_used_at, a.name AS creator
             FROM releases.update_keys k LEFT JOIN core.accounts a ON a.id = k.creator_id
            WHERE k.repo_id = $1 ORDER BY k.id""",
        repo_id,
    )
    return [dict(row) for row in rows]


async def delete_key(conn: Queryable, repo_id: int, key_id: int) -> str | None:
    """The deleted key's name; None when the repository has no such key."""
    name: str | None = await conn.fetchval(
        "DELETE FROM releases.update_keys WHERE id = $1 AND repo_id = $2 RETURNING name",
        key_id,
        repo_id,
    )
    return name


async def key_by_digest(pool: asyncpg.Pool, repo_id: int, digest: bytes) -> int | None:
    """The id of the key of this repository with this digest."""
    key_id: int | None = await pool.fetchval(
        "SELECT id FROM releases.update_keys WHERE key_sha256 = $1 AND repo_id = $2",
        digest,
        repo_id,
    )
    return key_id


async def key_exists(pool: asyncpg.Pool, repo_id: int, key_id: int) -> bool:
    """Whether key `key_id` still exists (not revoked) for this repository."""
    found: bool = await pool.fetchval(
        "SELECT EXISTS (SELECT 1 FROM releases.update_keys WHERE id = $1 AND repo_id = $2)",
        key_id,
        repo_id,
    )
    return found


def rendered(row: asyncpg.Record | dict[str, Any]) -> dict[str, Any]:
    created: datetime = row["created_at"]
    return {"id": row["id"], "name": row["name"], "created_at": created}


async def mark_used(pool: asyncpg.Pool, key_id: int) -> None:
    await pool.execute("UPDATE releases.update_keys SET last_used_at = now() WHERE id = $1", key_id)
