"""Creating and revoking update keys, each with its audit entry in the same transaction (the API's
and the console's): the entry names the key and its id, never the key nor its digest."""

from __future__ import annotations

import secrets

import asyncpg
from forge_common import audit
from forge_common.auth import Viewer, hash_token
from forge_common.db import transaction

from ..models import RepoRef
from . import queries

PREFIX = "forge_uk_"  # recognisable in a leaked config file or by secret scanners


async def create(
    pool: asyncpg.Pool, ref: RepoRef, name: str, viewer: Viewer, origin: audit.Origin
) -> tuple[asyncpg.Record, str]:
    """A new key of the repository: its row and its secret, which exists only in this answer
    (the database keeps its digest)."""
    key = PREFIX + secrets.token_urlsafe(32)
    async with transaction(pool) as conn:
        row = await queries.create_key(conn, ref.repo_id, name, hash_token(key), viewer.id)
        await audit.record_as(
            conn,
            origin,
            kind="update_key.created",
            target=f"{ref.owner}/{ref.name}",
            changes={"key_id": (None, row["id"]), "name": (None, name)},
            repo_id=ref.repo_id,
        )
    return row, key


async def revoke(pool: asyncpg.Pool, ref: RepoRef, key_id: int, origin: audit.Origin) -> bool:
    """False when the repository has no such key (nothing is recorded then)."""
    async with transaction(pool) as conn:
        name = await queries.delete_key(conn, ref.repo_id, key_id)
        if name is None:
            return False
        await audit.record_as(
            conn,
            origin,
            kind="update_key.revoked",
            target=f"{ref.owner}/{ref.name}",
            changes={"key_id": (key_id, None), "name": (name, None)},
            repo_id=ref.repo_id,
        )
    return True
