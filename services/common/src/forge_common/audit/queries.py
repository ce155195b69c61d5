"""The audit log's SQL (core.audit_log, core migration 0007)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..db import Conn, Queryable

INSERT = """INSERT INTO core.audit_log (actor, kind, target, changes, request_id, source, repo_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            RETURNING id, created_at"""


@dataclass(frozen=True, slots=True)
class Filters:
    """What a reader narrows the log to; None: no narrowing (`repo_id` None: the whole site,
    which only site admins read). `kind` matches itself and the kinds below it: `release`
    matches `release.withdrawn`."""

    repo_id: int | None = None
    actor: str | None = None
    kind: str | None = None
    since: datetime | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    id: int
    created_at: datetime
    actor: str | None
    kind: str
    target: str
    changes: dict[str, dict[str, Any]]
    request_id: str | None
    source: str
    repo_id: int | None


async def insert(
    conn: Conn,
    *,
    actor: str | None,
    kind: str,
    target: str,
    changes: dict[str, dict[str, Any]],
    request_id: str | None,
    source: str,
    repo_id: int | None,
) -> tuple[int, datetime]:
    row = await conn.fetchrow(INSERT, actor, kind, target, changes, request_id, source, repo_id)
    assert row is not None
    return row["id"], row["created_at"]


# `$1::bigint IS NULL OR ...`: one statement (one prepared plan) for every combination of filters.
_WHERE = """WHERE ($1::bigint IS NULL OR repo_id = $1)
              AND ($2::text IS NULL OR lower(actor) = lower($2))
              AND ($3::text IS NULL OR kind = $3 OR kind LIKE $3 || '.%')
              AND ($4::timestamptz IS NULL OR created_at >= $4)"""


def _args(filters: Filters) -> tuple[Any, ...]:
    return (filters.repo_id, filters.actor, filters.kind, filters.since)


async def page(conn: Queryable, filters: Filters, *, limit: int, offset: int) -> list[Entry]:
    """Newest first by id (ids are taken at insert: two concurrent transactions may commit in
    the other order, which a reader of an append-only log does not notice)."""
    rows = await conn.fetch(
        f"""SELECT id, created_at, actor, kind, target, changes, request_id, source, repo_id
              FROM core.audit_log {_WHERE}
             ORDER BY id DESC LIMIT $5 OFFSET $6""",
        *_args(filters),
        limit,
        offset,
    )
    return [Entry(**dict(row)) for row in rows]


async def count(conn: Queryable, filters: Filters) -> int:
    total = await conn.fetchval(f"SELECT count(*) FROM core.audit_log {_WHERE}", *_args(filters))
    return int(total)


async def delete_older_than(conn: Queryable, cutoff: datetime) -> int:
    """Retention: whole entries older than `cutoff` go; returns how many."""
    status = await conn.execute("DELETE FROM core.audit_log WHERE created_at < $1", cutoff)
    return int(status.split()[-1])


async def repo_id_named(conn: Queryable, owner: str, name: str) -> int:
    """The id of the repository `owner/name` (names compared as the accounts compare them); 0
    when none has it, so a filter by it lists nothing."""
    found = await conn.fetchval(
        """SELECT r.id FROM core.repositories r JOIN core.accounts a ON a.id = r.owner_id
            WHERE lower(a.name) = lower($1) AND lower(r.name) = lower($2)""",
        owner,
        name,
    )
    return int(found) if found is not None else 0
