"""Setting and removing a repository's signing key, each with its audit entry in the same
transaction (the API's and the console's). The entry holds what the API shows of the key (its
key id), before and after: a public key is no secret, but an entry never needs the whole text."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg
from forge_common import audit
from forge_common.auth import Viewer
from forge_common.db import Conn, transaction

from ..models import RepoRef
from . import queries
from .kinds import KeyKind, ParsedKey


def _shown(kind: KeyKind, row: dict[str, Any] | None) -> dict[str, str] | None:
    return None if row is None else dict(kind.parse(row["public_key"]).shown)


async def _record(
    conn: Conn, ref: RepoRef, kind: KeyKind, change: tuple[Any, Any], origin: audit.Origin
) -> None:
    await audit.record_as(
        conn,
        origin,
        kind=f"signing_key.{'removed' if change[1] is None else 'set'}",
        target=f"{ref.owner}/{ref.name}",
        changes={kind.name: change},
        repo_id=ref.repo_id,
    )


async def set_key(
    pool: asyncpg.Pool,
    ref: RepoRef,
    kind: KeyKind,
    key: ParsedKey,
    viewer: Viewer,
    origin: audit.Origin,
) -> datetime:
    async with transaction(pool) as conn:
        before = _shown(kind, await queries.key_of(conn, ref.repo_id, kind.name))
        updated_at = await queries.set_key(conn, ref.repo_id, kind.name, key.stored, viewer.id)
        after = dict(key.shown)
        if before != after:
            await _record(conn, ref, kind, (before, after), origin)
    return updated_at


async def remove(pool: asyncpg.Pool, ref: RepoRef, kind: KeyKind, origin: audit.Origin) -> bool:
    async with transaction(pool) as conn:
        before = _shown(kind, await queries.key_of(conn, ref.repo_id, kind.name))
        if before is None or not await queries.delete_key(conn, ref.repo_id, kind.name):
            return False
        await _record(conn, ref, kind, (before, None), origin)
    return True
