"""SQL of signing and verification keys (migration 0008_signing_keys.sql): a repository's key
of one kind (kinds.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from forge_common.db import Queryable


async def key_of(conn: Queryable, repo_id: int, kind: str) -> dict[str, Any] | None:
    """The repository's key of `kind` (`public_key`) with who set it and when, or None."""
    row = await conn.fetchrow(
        """SELECT k.public_key, k.updated_at, a.name AS updated_by
             FROM releases.signing_keys k LEFT JOIN core.accounts a ON a.id = k.updated_by
            WHERE k.repo_id = $1 AND k.kind = $2""",
        repo_id,
        kind,
    )
    return None if row is None else dict(row)


async def set_key(
    conn: Queryable, repo_id: int, kind: str, public_key: str, actor_id: int
) -> datetime:
    """Set or replace the repository's key of `kind`; when it was set."""
    updated_at: datetime = await conn.fetchval(
        """INSERT INTO releases.signing_keys (repo_id, kind, public_key, updated_by)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (repo_id, kind) DO UPDATE
              SET public_key = EXCLUDED.public_key, updated_by = EXCLUDED.updated_by,
                  updated_at = now()
           RETURNING updated_at""",
        repo_id,
        kind,
        public_key,
        actor_id,
    )
    return updated_at


async def delete_key(conn: Queryable, repo_id: int, kind: str) -> bool:
    status: str = await conn.execute(
        "DELETE FROM releases.signing_keys WHERE repo_id = $1 AND kind = $2", repo_id, kind
    )
    return status == "DELETE 1"
