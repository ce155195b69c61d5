"""SQL of event delivery: ingest, claims with a lease, outcomes, dead letters and redelivery."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import asyncpg

from .models import (
    AttemptRow,
    Claimed,
    DeliveryRow,
    IncomingEvent,
    Leases,
    Outcome,
    Stored,
    leased_delivery,
)

NOTIFY_CHANNEL = "gateway_deliveries"


# OWNED_IS_PENDING: statements that find a worker's own deliveries by id test `lease_owner` and
# not `status`. Only a claim or an ingest sets a lease owner, on a pending delivery, and every
# outcome and hand-back clears it, so a delivery with an owner is pending. Saying `status =
# 'pending'` as well let the planner pick the partial index of pending deliveries (WHERE status =
# 'pending') over the primary key whenever its statistics lagged (a table that had just grown, as
# in a backlog), and read that whole index, with the dead entries every claim leaves, for a few
# hundred ids.


# One statement, so one transaction and one round trip. A data-modifying CTE always runs,
# referenced or not; NOTIFY (sent at commit) only when a delivery is left for any worker to claim.
STORE = f"""WITH new AS (
               INSERT INTO gateway.events
                   (id, type, source, occurred_at, repo_id, org_id, actor_id, payload)
               SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[],
                                    $5::bigint[], $6::bigint[], $7::bigint[], $8::jsonb[])
               ON CONFLICT (id) DO NOTHING
               RETURNING id),
           added AS (
               INSERT INTO gateway.deliveries
                      (event_id, plugin, attempts, lease_owner, lease_until, next_attempt_at)
               SELECT new.id, d.plugin, d.leased::int,
                      CASE WHEN d.leased THEN $12 END,
                      CASE WHEN d.leased THEN now() + make_interval(secs => $13) END,
                      CASE WHEN d.leased THEN now() + make_interval(secs => $13) ELSE now() END
                 FROM new JOIN unnest($9::uuid[], $10::text[], $11::bool[])
                               AS d(event_id, plugin, leased)
                      ON d.event_id = new.id
               RETURNING id, event_id, plugin, lease_owner IS NOT NULL AS leased)
           SELECT (SELECT count(*) FROM new) AS new,
                  (SELECT pg_notify('{NOTIFY_CHANNEL}', '') FROM added WHERE NOT leased
                    LIMIT 1) AS notified,
                  ARRAY(SELECT id FROM added WHERE leased) AS ids,
                  ARRAY(SELECT event_id FROM added WHERE leased) AS event_ids,
                  ARRAY(SELECT plugin FROM added WHERE leased) AS plugins,
                  ARRAY(SELECT DISTINCT plugin FROM added WHERE NOT leased) AS unleased,
                  now() AS started_at"""


async def store_events(
    pool: asyncpg.Pool,
    events: Sequence[IncomingEvent],
    targets: Callable[[str], Sequence[str]],
    leases: Leases | None = None,
) -> Stored:
    """Each new event once, and one delivery per target of its type (STORE); a resent event id
    changes nothing. With `leases`, the first `quota[plugin]` deliveries of each plugin are
    stored leased to `leases.owner`, attempt 1 under way, as a claim leaves them: returned, they
    need no claim. The rest are due at once, for any worker."""
    quota = Counter(leases.quota if leases is not None else {})
    by_id: dict[uuid.UUID, IncomingEvent] = {}
    event_ids: list[uuid.UUID] = []
    plugins: list[str] = []
    leased: list[bool] = []
    for event in events:
        if event.id in by_id:  # the same id twice in a batch: one delivery per plugin still
            continue
        by_id[event.id] = event
        for plugin in targets(event.type):
            event_ids.append(event.id)
            plugins.append(plugin)
            leased.append(quota[plugin] > 0)
            quota[plugin] -= 1
    row = await pool.fetchrow(
        STORE,
        [e.id for e in events],
        [e.type for e in events],
        [e.source for e in events],
        [e.occurred_at for e in events],
        [e.repo_id for e in events],
        [e.org_id for e in events],
        [e.actor_id for e in events],
        [dict(e.payload) for e in events],
        event_ids,
        plugins,
        leased,
        leases.owner if leases is not None else None,
        leases.seconds if leases is not None else 0.0,
    )
    assert row is not None
    new: int = row["new"]
    claimed = [
        leased_delivery(by_id[event_id], delivery_id, plugin, row["started_at"])
        for delivery_id, event_id, plugin in zip(
            row["ids"], row["event_ids"], row["plugins"], strict=True
        )
    ]
    return Stored(new, len(events) - new, claimed, frozenset(row["unleased"]))


# What the next claimer records for an attempt whose worker never did (killed, or cut off from the
# database until its lease ended): the attempt was made, its outcome is unknown.
LOST_ATTEMPT = "lease expired: the worker {owner} recorded no outcome (stopped or cut off)"


# The leased rows are updated by id, one primary-key lookup each (`d.id = ANY(ARRAY(...))`): joined
# to the claimed rows alone, the planner hashed the whole deliveries table for a claim of 100
# whenever its cost model found that cheaper (3.5 ms instead of 1.2 with 20,000 stored).
CLAIM = """WITH due AS (
           SELECT id, event_id, lease_owner, lease_until, attempts FROM gateway.deliveries
            WHERE plugin = $1 AND status = 'pending' AND next_attempt_at <= now()
              AND id <> ALL($6::bigint[])
            ORDER BY next_attempt_at, id
            LIMIT $2
            FOR UPDATE SKIP LOCKED),
       lost AS (
           INSERT INTO gateway.delivery_attempts
                  (delivery_id, attempt, started_at, outcome, error)
           SELECT id, attempts, lease_until, 'retry', replace($5, '{owner}', lease_owner)
             FROM due WHERE lease_owner IS NOT NULL AND attempts > 0
           ON CONFLICT DO NOTHING)
       UPDATE gateway.deliveries d
          SET attempts = d.attempts + 1,
              lease_owner = $3,
              lease_until = now() + make_interval(secs => $4),
              next_attempt_at = now() + make_interval(secs => $4),
              last_error = CASE WHEN due.lease_owner IS NULL THEN d.last_error
                                ELSE replace($5, '{owner}', due.lease_owner) END
         FROM due, gateway.events e
        WHERE d.id = due.id AND d.id = ANY(ARRAY(SELECT id FROM due)) AND e.id = d.event_id
          AND e.id = ANY(ARRAY(SELECT event_id FROM due))
       RETURNING d.id, d.attempts AS attempt, d.plugin, e.id AS event_id, e.type, e.occurred_at,
                 e.repo_id, e.org_id, e.payload, now() AS started_at"""


async def claim(
    pool: asyncpg.Pool,
    plugin: str,
    limit: int,
    owner: str,
    lease_seconds: float,
    held: Sequence[int] = (),
) -> list[Claimed]:
    """Lease up to `limit` due deliveries of `plugin` in one statement; the lease moves
    `next_attempt_at`, so a crashed worker's deliveries are due again when it ends (its holder
    renews it while it works on them: `renew`).

    A delivery still naming a lease owner was left by a worker that never recorded its attempt:
    that attempt is recorded here, as a retry, so `delivery_attempts` misses none. `held`: ids
    the caller still works on (its lease lapsed, say the database was slow): not claimed again."""
    rows = await pool.fetch(
        CLAIM,
        plugin,
        limit,
        owner,
        lease_seconds,
        LOST_ATTEMPT,
        list(held),
    )
    claimed = [Claimed(**dict(row)) for row in rows]
    return sorted(claimed, key=lambda c: c.id)


# Outcomes find their deliveries by id, one primary-key lookup each (`d.id = ANY(ARRAY(...))`),
# and the owner, never by `status` (OWNED_IS_PENDING). With `d.status = 'pending'` here, whenever
# the statistics lagged behind a table that had just grown (a backlog), the planner read the
# partial index of every pending delivery and compared each with each outcome: a statement of 150
# outcomes over a 20,000 backlog took 475 ms instead of 6. Joined to the outcomes alone, or with
# `d.id = ANY($2)`, the planner still read the whole table whenever its cost model found that
# cheaper than a few hundred lookups (57 us an outcome instead of 24 with 20,000 deliveries
# stored); an array computed by a subquery leaves it no such choice (docs/events.md "Drain").
FINISH = """WITH outcome AS (
               SELECT * FROM unnest($2::bigint[], $3::text[], $4::float8[], $5::text[],
                                    $6::int[], $7::timestamptz[])
                        AS o(id, outcome, retry_in, error, attempt, started_at)),
           updated AS (
               UPDATE gateway.deliveries d
                  SET status = CASE WHEN o.outcome IN ('retry', 'released') THEN 'pending'
                                    ELSE o.outcome END,
                      attempts = d.attempts - CASE WHEN o.outcome = 'released' THEN 1 ELSE 0 END,
                      next_attempt_at = now() + make_interval(secs => o.retry_in),
                      lease_owner = NULL,
                      lease_until = NULL,
                      last_error = COALESCE(o.error, d.last_error),
                      finished_at = CASE WHEN o.outcome IN ('retry', 'released') THEN NULL
                                         ELSE now() END
                 FROM outcome o
                WHERE d.id = o.id AND d.lease_owner = $1
                  AND d.id = ANY(ARRAY(SELECT id FROM outcome))
               RETURNING d.id),
           attempts AS (
               INSERT INTO gateway.delivery_attempts
                      (delivery_id, attempt, started_at, outcome, error)
               SELECT o.id, o.attempt, o.started_at, o.outcome, o.error
                 FROM outcome o JOIN updated u ON u.id = o.id
                WHERE o.outcome <> 'skipped')
           SELECT id FROM updated"""


def finish_arguments(owner: str, outcomes: Sequence[Outcome]) -> tuple[Any, ...]:
    """FINISH's parameters for `owner`'s `outcomes`."""
    return (
        owner,
        [o.delivery.id for o in outcomes],
        [o.outcome for o in outcomes],
        [o.retry_in for o in outcomes],
        [o.error for o in outcomes],
        [o.delivery.attempt for o in outcomes],
        [o.delivery.started_at for o in outcomes],
    )


async def finish_many(pool: asyncpg.Pool, owner: str, outcomes: Sequence[Outcome]) -> set[int]:
    """Record outcomes, and their attempts, in one statement (FINISH); the ids recorded. A
    delivery whose lease `owner` lost meanwhile (another worker owns it now) is left alone."""
    if not outcomes:
        return set()
    rows = await pool.fetch(FINISH, *finish_arguments(owner, outcomes))
    return {row["id"] for row in rows}


async def finish(
    pool: asyncpg.Pool,
    delivery: Claimed,
    owner: str,
    *,
    outcome: str,
    error: str | None = None,
    retry_in: float | None = None,
) -> bool:
    """Record one attempt's outcome (`Outcome`); False when our lease was lost meanwhile."""
    outcomes = [Outcome(delivery, outcome, error, retry_in or 0.0)]
    return delivery.id in await finish_many(pool, owner, outcomes)


async def renew(
    pool: asyncpg.Pool,
    owner: str,
    ids: Sequence[int],
    lease_seconds: float,
    ending_within: float | None = None,
) -> int:
    """The heartbeat: extend `owner`'s leases on `ids` (what it holds) that end within
    `ending_within` seconds (all by default); how many it renewed.

    A lease taken moments ago need not be renewed yet: at a high rate nearly everything held was
    claimed since the last beat, and rewriting those rows (and their index entries) each beat
    cost PostgreSQL more than any other statement but the outcomes (bench/RESULTS.md)."""
    if not ids:
        return 0
    if ending_within is None:
        ending_within = lease_seconds
    # SKIP LOCKED: a row locked now is being finished (or, its lease over, claimed by another
    # worker); waiting for it would only hold this statement's locks on the others. `d.id = ANY`
    # twice: the planner then finds the updated rows by the primary key too, not by a scan.
    # No `status = 'pending'` (see OWNED_IS_PENDING): with it, the planner read the whole partial
    # index of pending deliveries, dead entries and all, when its statistics lagged.
    result: str = await pool.execute(
        """UPDATE gateway.deliveries d
              SET lease_until = now() + make_interval(secs => $3),
                  next_attempt_at = now() + make_interval(secs => $3)
             FROM (SELECT id FROM gateway.deliveries
                    WHERE id = ANY($2::bigint[]) AND lease_owner = $1
                      AND lease_until <= now() + make_interval(secs => $4)
                    FOR UPDATE SKIP LOCKED) held
            WHERE d.id = held.id AND d.id = ANY($2::bigint[])""",
        owner,
        list(ids),
        lease_seconds,
        ending_within,
    )
    return int(result.rsplit(" ", 1)[-1])


async def hand_back(pool: asyncpg.Pool, owner: str, ids: Sequence[int]) -> int:
    """Give back leases of deliveries claimed but never called: due at once, not an attempt.
    (`lease_owner` implies pending: OWNED_IS_PENDING.)"""
    if not ids:
        return 0
    result: str = await pool.execute(
        """UPDATE gateway.deliveries
              SET attempts = attempts - 1, next_attempt_at = now(),
                  lease_owner = NULL, lease_until = NULL
            WHERE id = ANY($2::bigint[]) AND lease_owner = $1""",
        owner,
        list(ids),
    )
    count = int(result.rsplit(" ", 1)[-1])
    if count:
        await pool.execute(f"NOTIFY {NOTIFY_CHANNEL}")
    return count


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
    (delivered or skipped), with their deliveries and attempts (no foreign keys cascade: see
    migration 0003); dead letters and pending deliveries keep their event."""
    result: str = await pool.execute(
        """WITH old AS (
               SELECT e.id FROM gateway.events e
                WHERE e.received_at < now() - make_interval(secs => $1)
                  AND NOT EXISTS (SELECT 1 FROM gateway.deliveries d
                                   WHERE d.event_id = e.id AND d.status IN ('pending', 'dead'))),
           deliveries AS (
               DELETE FROM gateway.deliveries d USING old WHERE d.event_id = old.id
               RETURNING d.id),
           attempts AS (
               DELETE FROM gateway.delivery_attempts a USING deliveries
                WHERE a.delivery_id = deliveries.id)
           DELETE FROM gateway.events e USING old WHERE e.id = old.id""",
        older_than_days * 86400,
    )
    return int(result.rsplit(" ", 1)[-1])
