"""Several delivery workers and their leases (docs/events.md "Delivery"): each event delivered
once, a crashed worker's lease expiring, heartbeats, a graceful stop, pruning."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace
from typing import Any

import pytest
from forge_gateway.events import delivery, queries
from forge_gateway.keys import DELIVERY_WORKER
from forge_testing.plans import explained, explained_as_prepared, rows_read

from .events_support import (
    assert_each_delivered_once,
    assert_lost_attempt_then_delivered,
    envelope,
    post_events,
    statuses,
    store_deliveries,
    store_unleased,
    two_replicas,
    until_deliveries,
)


async def test_two_workers_claiming_one_backlog_deliver_each_event_exactly_once(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Deliveries no ingest leased (docs/events.md "Leased at ingest"), claimed by two replicas
    side by side."""
    async with two_replicas(fresh, fakes, helpers, "shared") as (first, _second, fake):
        events = [envelope() for _ in range(40)]
        await store_unleased(first.app[DELIVERY_WORKER].pool, events, ["shared"])
        await assert_each_delivered_once(db, fake, "shared", events)


async def test_a_crashed_workers_lease_expires_and_another_worker_delivers(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("lease", events=["release.published"]))
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, health_interval=60))
    worker = client.app[DELIVERY_WORKER]
    await worker.stop()  # this replica's worker is out of the way; we play the crashed one
    event = envelope()
    await post_events(client, [event])
    pool = worker.pool
    [claimed] = await queries.claim(pool, "lease", 10, "crashed-worker", lease_seconds=0.3)
    assert claimed.attempt == 1
    # While the lease lasts, no other worker can claim it.
    assert await queries.claim(pool, "lease", 10, "other", lease_seconds=5) == []
    await worker.start(pool)
    await until_deliveries(db, [("lease", "delivered", 2)])
    assert fake.metadata["OnEvent"][-1]["x-attempt"] == "2"
    # The crashed worker's late outcome is ignored: the delivery is not its own any more.
    assert not await queries.finish(pool, claimed, "crashed-worker", outcome="dead")
    assert await statuses(db) == [("lease", "delivered", 2)]
    # Its attempt, whose outcome nobody knows, is recorded all the same (by the next claimer).
    await assert_lost_attempt_then_delivered(db, "crashed-worker")


async def test_the_heartbeat_renews_only_leases_near_their_end(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """A lease taken since the last beat is left as it is (nothing to rewrite); one near its end
    is extended, so the delivery stays with its worker."""
    fake = await fakes(helpers.FakePlugin("beat", events=["release.published"]))
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, health_interval=60))
    worker = client.app[DELIVERY_WORKER]
    await worker.stop()
    await post_events(client, [envelope(), envelope()])
    pool = worker.pool
    old, new = await queries.claim(pool, "beat", 10, "w", lease_seconds=10)
    await db.execute("UPDATE gateway.deliveries SET lease_until = now() + interval '1 second'")
    await db.execute(
        "UPDATE gateway.deliveries SET lease_until = now() + interval '9 seconds' WHERE id = $1",
        new.id,
    )
    assert await queries.renew(pool, "w", [old.id, new.id], 10, ending_within=8) == 1
    rows = await db.fetch(
        "SELECT id, lease_until - now() AS left FROM gateway.deliveries ORDER BY id"
    )
    left = {r["id"]: r["left"].total_seconds() for r in rows}
    assert 9 < left[old.id] <= 10  # renewed for a whole lease
    assert 8 < left[new.id] <= 9  # untouched
    assert await queries.claim(pool, "beat", 10, "other", lease_seconds=5) == []


async def test_a_call_longer_than_the_lease_keeps_it_through_heartbeats(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Leases are short (a killed gateway's deliveries come back soon) and renewed while held."""
    fake = helpers.FakePlugin("long", events=["release.published"])
    fake.event_delay = 1.0
    await fakes(fake)
    delivery = replace(helpers.FAST.delivery, lease_seconds=0.3, heartbeat_interval=0.1)
    client = await fresh(
        [helpers.entry(fake, timeouts={"OnEvent": 5})], replace(helpers.FAST, delivery=delivery)
    )
    await post_events(client, [envelope()])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, what="the call")
    await asyncio.sleep(0.6)  # twice the lease
    pool = client.app[DELIVERY_WORKER].pool
    assert await queries.claim(pool, "long", 10, "other", lease_seconds=5) == []
    await until_deliveries(db, [("long", "delivered", 1)])
    assert fake.calls["OnEvent"] == 1


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_a_graceful_stop_records_the_interrupted_call_and_leaves_no_lease(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("hung", events=["release.published"]))
    fake.event_delay = 30  # OnEvent outlasts the stop
    client = await fresh(
        [helpers.entry(fake, timeouts={"OnEvent": 30})], replace(helpers.FAST, health_interval=60)
    )
    await post_events(client, [envelope(), envelope()])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 2, what="two calls in flight")
    worker = client.app[DELIVERY_WORKER]
    started = time.monotonic()
    await worker.stop()
    assert time.monotonic() - started < 2  # stop_grace is 0.2 s, not the 30 s deadline
    rows = await db.fetch(
        """SELECT status, attempts, lease_owner, next_attempt_at <= now() AS due
             FROM gateway.deliveries"""
    )
    assert [tuple(r) for r in rows] == [("pending", 1, None, True)] * 2  # due again at once
    attempts = await db.fetch("SELECT attempt, outcome, error FROM gateway.delivery_attempts")
    assert [tuple(a) for a in attempts] == [(1, "retry", delivery.INTERRUPTED)] * 2


async def test_finished_events_are_pruned_after_retention_but_dead_and_pending_stay(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    client = await fresh([])
    await client.app[DELIVERY_WORKER].stop()
    delivered, dead, pending = envelope(), envelope(), envelope()
    await post_events(client, [delivered, dead, pending])
    for event, status in ((delivered, "delivered"), (dead, "dead"), (pending, "pending")):
        await db.execute(
            "INSERT INTO gateway.deliveries (event_id, plugin, status) VALUES ($1, 'p', $2)",
            uuid.UUID(event["id"]),
            status,
        )
    await db.execute("UPDATE gateway.events SET received_at = now() - interval '8 days'")
    fresh_event = envelope()
    await post_events(client, [fresh_event])
    await db.execute(
        """INSERT INTO gateway.delivery_attempts (delivery_id, attempt, started_at, outcome)
           SELECT id, 1, now(), 'delivered' FROM gateway.deliveries WHERE status = 'delivered'"""
    )
    pool = client.app[DELIVERY_WORKER].pool
    assert await queries.prune(pool, older_than_days=7) == 1
    kept = {r["id"] for r in await db.fetch("SELECT id::text FROM gateway.events")}
    assert kept == {dead["id"], pending["id"], fresh_event["id"]}
    # The pruned event's delivery and its attempt go with it; the others stay.
    left = await db.fetch("SELECT event_id::text AS event, status FROM gateway.deliveries")
    assert sorted((r["event"], r["status"]) for r in left) == sorted(
        [(dead["id"], "dead"), (pending["id"], "pending")]
    )
    assert await db.fetchval("SELECT count(*) FROM gateway.delivery_attempts") == 0


async def test_recording_outcomes_reads_only_their_deliveries_in_a_backlog(
    fresh: Any, helpers: Any, db: Any
) -> None:
    """An outcome statement costs the same whatever the backlog. Its deliveries are found by id,
    not among the pending ones: while PostgreSQL's statistics did not know of a backlog yet, a
    statement of 100 outcomes once read each of 20,000 pending deliveries (and compared each
    with each outcome), so a drain slowed as it went."""
    client = await fresh([])
    worker = client.app[DELIVERY_WORKER]
    await worker.stop()
    await store_deliveries(db, 20000, "delivered")  # what the statistics know of
    await db.execute("ANALYZE gateway.deliveries")
    await store_deliveries(db, 20000, "pending")  # then a backlog
    pool = worker.pool
    claimed = await queries.claim(pool, "p", 100, "w", lease_seconds=30)
    outcomes = [queries.Outcome(d, "delivered") for d in claimed]
    plan = await explained(db, queries.FINISH, *queries.finish_arguments("w", outcomes))
    read = rows_read(plan, "deliveries")
    assert 100 <= read <= 200, f"the statement read {read} deliveries for 100 outcomes"
    assert await queries.finish_many(pool, "w", outcomes) == {d.id for d in claimed}
    assert (await statuses(db)).count(("p", "delivered", 1)) == 100


async def test_outcome_statements_read_only_their_deliveries_once_prepared_on_a_small_table(
    fresh: Any, helpers: Any, db: Any
) -> None:
    """Each connection prepares the outcome statement once. Planned once for all arguments, as
    PostgreSQL does after a few runs, its plan was made while the table was small and kept: a
    scan of every delivery for each statement once the table had grown (55,000 rows read per
    statement in a drain). The worker's connections plan each statement for its own batch."""
    client = await fresh([])
    worker = client.app[DELIVERY_WORKER]
    await worker.stop()
    async with worker.pool.acquire() as conn:
        await store_deliveries(db, 50, "pending")  # a quiet start: a few outcomes at a time
        quiet = await queries.claim(worker.pool, "p", 50, "w", lease_seconds=30)
        for first in range(0, 50, 5):
            outcomes = [queries.Outcome(d, "delivered") for d in quiet[first : first + 5]]
            await conn.fetch(queries.FINISH, *queries.finish_arguments("w", outcomes))
        await store_deliveries(db, 40000, "delivered")  # then a busy hour
        await store_deliveries(db, 20000, "pending")  # and a backlog
        claimed = await queries.claim(worker.pool, "p", 100, "w", lease_seconds=30)
        arguments = queries.finish_arguments(
            "w", [queries.Outcome(d, "delivered") for d in claimed]
        )
        plan = await explained_as_prepared(conn, queries.FINISH, *arguments)
    read = rows_read(plan, "deliveries")
    assert 100 <= read <= 200, f"the statement read {read} deliveries for 100 outcomes"


async def test_a_claim_reads_only_its_batch_in_a_backlog(fresh: Any, db: Any) -> None:
    """A claim costs the same whatever the backlog: it takes the first due deliveries along the
    index of pending ones and updates them, and reads their events, by id. Joined to the claimed
    rows instead, PostgreSQL hashed all 20,000 deliveries for a claim of 100 whenever its cost
    model found that cheaper; and while the events' statistics were taken just after a prune
    (pages, no rows), it read every event and looked up each one's delivery."""
    client = await fresh([])
    await client.app[DELIVERY_WORKER].stop()
    await store_deliveries(db, 20000, "delivered")
    async with db.transaction():  # pruned: the rows go, their pages stay until a vacuum
        await db.execute("DELETE FROM gateway.deliveries")
        await db.execute("DELETE FROM gateway.events")
    await db.execute("ANALYZE gateway.events")
    await store_deliveries(db, 20000, "pending")  # then a backlog the statistics do not know of
    await db.execute("ANALYZE gateway.deliveries")
    arguments = ("p", 100, "w", 30.0, queries.LOST_ATTEMPT, [])
    plan = await explained(db, queries.CLAIM, *arguments)  # planned afresh, as the worker does
    read = rows_read(plan, "deliveries")
    assert 100 <= read <= 200, f"the claim read {read} deliveries for 100"
    read = rows_read(plan, "events")
    assert read == 100, f"the claim read {read} events for 100"
