"""SQL of event delivery: ingest, claims with a lease, outcomes, dead letters and redelivery."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from .models import IncomingEvent

NOTIFY_CHANNEL = "gateway_deliveries"


async def store_events(
    pool: asyncpg.Pool,
    events: Sequence[IncomingEvent],
    targets: Callable[[str], Sequence[str]],
) -> tuple[int, int]:
    """In one transaction (two statements), each new event once and one delivery per target.

    Returns (new, duplicates); a resent event id changes nothing. Workers are woken by NOTIFY,
    which PostgreSQL sends when the transaction commits.
    """
    async with pool.acquire() as conn, conn.transaction():
        inserted = await conn.fetch(
            """INSERT INTO gateway.events
                   (id, type, source, occurred_at, repo_id, org_id, actor_id, payload)
               SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[],
                                    $5::bigint[], $6::bigint[], $7::bigint[], $8::jsonb[])
               ON CONFLICT (id) DO NOTHING
               RETURNING id, type""",
            [e.id for e in events],
            [e.type for e in events],
            [e.source for e in events],
            [e.occurred_at for e in events],
            [e.repo_id for e in events],
            [e.org_id for e in events],
            [e.actor_id for e in events],
            [dict(e.payload) for e in events],
        )
        pairs = [(row["id"], plugin) for row in inserted for plugin in targets(row["type"])]
        if pairs:
            await conn.execute(
                """INSERT INTO gateway.deliveries (event_id, plugin)
                   SELECT * FROM unnest($1::uuid[], $2::text[])""",
                [event_id for event_id, _ in pairs],
                [plugin for _, plugin in pairs],
            )
        new = len(inserted)
        if new:
            await conn.execute(f"NOTIFY {NOTIFY_CHANNEL}")
    return new, len(events) - new


@dataclass(frozen=True, slots=True)
class Claimed:
    """A leased delivery with its event."""

    id: int
    attempt: int
    plugin: str
    event_id: uuid.UUID
    type: str
    occurred_at: datetime
    repo_id: int | None
    org_id: int | None
    payload: dict[str, Any]
    started_at: datetime


async def claim(
    pool: asyncpg.Pool, plugin: str, limit: int, owner: str, lease_seconds: float
) -> list[Claimed]:
    """Lease up to `limit` due deliveries of `plugin`; the lease moves `next_attempt_at`, so a
    crashed worker's deliveries are due again when it ends."""
    rows = await pool.fetch(
        """WITH due AS (
               SELECT id FROM gateway.deliveries
                WHERE plugin = $1 AND status = 'pending' AND next_attempt_at <= now()
                ORDER BY next_attempt_at, id
                LIMIT $2
                FOR UPDATE SKIP LOCKED)
           UPDATE gateway.deliveries d
              SET attempts = d.attempts + 1,
                  lease_owner = $3,
                  lease_until = now() + make_interval(secs => $4),
                  next_attempt_at = now() + make_interval(secs => $4)
             FROM due, gateway.events e
            WHERE d.id = due.id AND e.id = d.event_id
           RETURNING d.id, d.attempts AS attempt, d.plugin, e.id AS event_id, e.type, e.occurred_at,
                     e.repo_id, e.org_id, e.payload, now() AS started_at""",
        plugin,
        limit,
        owner,
        lease_seconds,
    )
    claimed = [Claimed(**dict(row)) for row in rows]
    return sorted(claimed, key=lambda c: c.id)


async def finish(
    pool: asyncpg.Pool,
    delivery: Claimed,
    owner: str,
    *,
    outcome: str,
    error: str | None = None,
    retry_in: float | None = None,
) -> bool:
    """Record an attempt's outcome: 'delivered', 'skipped', 'dead', 'retry' (due in `retry_in`
    seconds) or 'released' (the attempt was not made: not counted). False when our lease was
    lost meanwhile (another worker owns the delivery now) and nothing was changed."""
    status = {"retry": "pending", "released": "pending"}.get(outcome, outcome)
    async with pool.acquire() as conn, conn.transaction():
        updated = await conn.fetchval(
            """UPDATE gateway.deliveries
                  SET status = $3,
                      attempts = attempts - CASE WHEN $4 = 'released' THEN 1 ELSE 0 END,
                      next_attempt_at = now() + make_interval(secs => $5),
                      lease_owner = NULL,
                      lease_until = NULL,
                      last_error = COALESCE($6, last_error),
                      finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
                WHERE id = $1 AND lease_owner = $2 AND status = 'pending'
               RETURNING true""",
            delivery.id,
            owner,
            status,
            outcome,
            retry_in or 0.0,
            error,
        )
        if not updated:
            return False
        if outcome != "skipped":
            await conn.execute(
                """INSERT INTO gateway.delivery_attempts
                       (delivery_id, attempt, started_at, outcome, error)
                   VALUES ($1, $2, $3, $4, $5)""",
                delivery.id,
                delivery.attempt,
                delivery.started_at,
                "retry" if outcome == "retry" else outcome,
                error,
            )
    return True


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    id: int
    event_id: uuid.UUID
    event_type: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None


async def list_deliveries(
    pool: asyncpg.Pool, plugin: str, status: str | None, limit: int
) -> list[DeliveryRow]:
    """Newest first."""
    rows = await pool.fetch(
        """SELECT d.id, d.event_id, e.type AS event_type, d.status, d.attempts,
                  d.next_attempt_at, d.last_error, d.created_at, d.finished_at
             FROM gateway.deliveries d JOIN gateway.events e ON e.id = d.event_id
            WHERE d.plugin = $1 AND ($2::text IS NULL OR d.status = $2)
            ORDER BY d.id DESC
            LIMIT $3""",
        plugin,
        status,
        limit,
    )
    return [DeliveryRow(**dict(row)) for row in rows]


@dataclass(frozen=True, slots=True)
class AttemptRow:
    attempt: int
    started_at: datetime
    finished_at: datetime
    outcome: str
    error: str | None


async def delivery_with_attempts(
    pool: asyncpg.Pool, plugin: str, delivery_id: int
) -> tuple[DeliveryRow, list[AttemptRow]] | None:
    """One delivery of `plugin` and every attempt made, oldest first; None when unknown."""
    row = await pool.fetchrow(
        """SELECT d.id, d.event_id, e.type AS event_type, d.status, d.attempts,
                  d.next_attempt_at, d.last_error, d.created_at, d.finished_at
             FROM gateway.deliveries d JOIN gateway.events e ON e.id = d.event_id
            WHERE d.plugin = $1 AND d.id = $2""",
        plugin,
        delivery_id,
    )
    if row is None:
        return None
    attempts = await pool.fetch(
        """SELECT attempt, started_at, finished_at, outcome, error
             FROM gateway.delivery_attempts WHERE delivery_id = $1
            ORDER BY started_at, attempt""",
        delivery_id,
    )
    return DeliveryRow(**dict(row)), [AttemptRow(**dict(a)) for a in attempts]


async def redeliver(pool: asyncpg.Pool, plugin: str, delivery_id: int | None) -> int:
    """Put finished deliveries back in the queue with a fresh attempt budget: one by id (dead,
    skipped or delivered: a replay), or every dead one of the plugin. Returns how many."""
    result: str = await pool.execute(
        """UPDATE gateway.deliveries
              SET status = 'pending', attempts = 0, next_attempt_at = now(),
                  finished_at = NULL, lease_owner = NULL, lease_until = NULL
            WHERE plugin = $1
              AND (($2::bigint IS NULL AND status = 'dead')
                   OR (id = $2 AND status IN ('dead', 'skipped', 'delivered')))""",
        plugin,
        delivery_id,
    )
    count = int(result.rsplit(" ", 1)[-1])
    if count:
        await pool.execute(f"NOTIFY {NOTIFY_CHANNEL}")
    return count


async def open_counts(pool: asyncpg.Pool) -> dict[str, dict[str, int]]:
    """Pending and dead deliveries per plugin (what an operator must watch)."""
    rows = await pool.fetch(
        """SELECT plugin, status, count(*) AS n FROM gateway.deliveries
            WHERE status IN ('pending', 'dead') GROUP BY plugin, status"""
    )
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        counts.setdefault(row["plugin"], {})[row["status"]] = row["n"]
    return counts


async def prune(pool: asyncpg.Pool, older_than_days: float) -> int:
    """Delete events received before the retention period whose deliveries are all finished
    (delivered or skipped); dead letters and pending deliveries keep their event."""
    result: str = await pool.execute(
        """DELETE FROM gateway.events e
            WHERE e.received_at < now() - make_interval(secs => $1)
              AND NOT EXISTS (SELECT 1 FROM gateway.deliveries d
                               WHERE d.event_id = e.id AND d.status IN ('pending', 'dead'))""",
        older_than_days * 86400,
    )
    return int(result.rsplit(" ", 1)[-1])
