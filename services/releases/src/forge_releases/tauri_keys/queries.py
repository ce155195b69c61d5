"""SQL of Tauri public keys (migration 0005_tauri_keys.sql)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from forge_common.db import Queryable


async def key_of(conn: Queryable, repo_id: int) -> dict[str, Any] | None:
    """The repository's key line (`public_key`) with who set it and when, or None."""
    row = await conn.fetchrow(
        """SELECT k.public_key, k.updated_at, a.name AS updated_by
             FROM releases.tauri_keys k LEFT JOIN core.accounts a ON a.id = k.updated_by
            WHERE k.repo_id = $1""",
        repo_id,
    )
    return None if row is None else dict(row)


async def set_key(conn: Queryable, repo_id: int, public_key: str, actor_id: int) -> datetime:
    """Set or replace the key; when it was set."""
    updated_at: datetime = await conn.fetchval(
        """INSERT INTO releases.tauri_keys (repo_id, public_key, updated_by) VALUES ($1, $2, $3)
           ON CONFLICT (repo_id) DO UPDATE
              SET public_key = EXCLUDED.public_key, updated_by = EXCLUDED.updated_by,
                  updated_at = now()
           RETURNING updated_at""",
        repo_id,
        public_key,
        actor_id,
    )
    return updated_at


async def delete_key(conn: Queryable, repo_id: int) -> bool:
    status: str = await conn.execute("DELETE FROM releases.tauri_keys WHERE repo_id = $1", repo_id)
    return status == "DELETE 1"
