"""Deliveries leased at ingest (docs/events.md "Leased at ingest"): the statement that stores an
ingest's events leases to the worker of the same process what that worker can start soon, so they
need no claim; older deliveries waiting in the table keep their turn; a worker that dies with
such leases loses nothing; one stopped while the statement ran hands them back."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import replace
from typing import Any

from forge_gateway.events import queries
from forge_gateway.events.ingest import parse_batch
from forge_gateway.keys import DELIVERY_WORKER
from plugin.v1 import plugin_pb2

from .events_support import (
    assert_each_delivered_once,
    assert_lost_attempt_then_delivered,
    envelope,
    post_events,
    two_replicas,
    until_deliveries,
)

CAP = 4  # the plugin's max_in_flight


def gated(fake: Any) -> asyncio.Event:
    """OnEvent answers once the returned event is set."""
    gate = asyncio.Event()

    async def held_until_open(request: Any, metadata: dict[str, str]) -> Any:
        await gate.wait()
        return plugin_pb2.EventResponse(handled=True)

    fake.on_event = held_until_open
    return gate


def options(helpers: Any, **delivery: Any) -> Any:
    """By default no claiming ahead (the quota is then the free slots exactly); health checks
    out of the way."""
    tuned = replace(helpers.FAST.delivery, **{"prefetch_seconds": 0.0, **delivery})
    return replace(helpers.FAST, health_interval=60, delivery=tuned)


async def settled(client: Any, db: Any, plugin: str) -> None:
    """One event delivered: by then the worker has claimed and found the table empty, so it
    knows no older delivery waits there."""
    await post_events(client, [envelope()])
    await until_deliveries(db, [(plugin, "delivered", 1)])
    # DELETE, not TRUNCATE: TRUNCATE's exclusive locks on three tables, taken one by one, can
    # deadlock with the worker's own statements on them (it may claim again right now).
    async with db.transaction():
        for table in ("delivery_attempts", "deliveries", "events"):
            await db.execute(f"DELETE FROM gateway.{table}")


async def leased_at_ingest(db: Any, lease_seconds: float) -> list[tuple[str, int]]:
    """(owner, attempts) of the deliveries leased by the statement that stored them: their
    lease ends `lease_seconds` after the row was created, to the microsecond (a claim runs in a
    later transaction, so at a later now())."""
    rows = await db.fetch(
        """SELECT lease_owner, attempts FROM gateway.deliveries
            WHERE lease_until = created_at + make_interval(secs => $1) ORDER BY id""",
        lease_seconds,
    )
    return [(r["lease_owner"], r["attempts"]) for r in rows]


async def test_an_ingest_leases_to_its_worker_what_it_can_start_and_the_rest_waits_for_claims(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = helpers.FakePlugin("now", events=["release.published"])
    gate = gated(fake)
    await fakes(fake)
    # Claims only when woken (the first event's NOTIFY, a freed slot), never on a poll: a claim
    # under way when the ingest runs would hold the free slots the ingest leases here.
    quiet = options(helpers, poll_interval=30.0)
    client = await fresh([helpers.entry(fake, max_in_flight=CAP)], quiet)
    worker = client.app[DELIVERY_WORKER]
    gate.set()
    await settled(client, db, "now")
    await helpers.eventually(lambda: not worker.claim_under_way, what="the claim after it")
    gate.clear()
    events = [envelope() for _ in range(3 * CAP)]
    assert (await post_events(client, events)).status == 202
    # As many as the plugin has free slots, leased to this worker, attempt 1 under way.
    lease = worker.options.lease_seconds
    assert await leased_at_ingest(db, lease) == [(worker.owner, 1)] * CAP
    await helpers.eventually(lambda: fake.events_in_flight == CAP, what="the leased calls")
    # The rest waits, due, for whichever worker has room first.
    waiting = await db.fetchval(
        "SELECT count(*) FROM gateway.deliveries WHERE lease_owner IS NULL AND attempts = 0"
    )
    assert waiting == 2 * CAP
    gate.set()
    await until_deliveries(db, [("now", "delivered", 1)] * 3 * CAP)
    assert sorted(fake.event_ids()[1:]) == sorted(e["id"] for e in events)  # each once


async def test_older_deliveries_waiting_in_the_table_go_first_and_an_ingest_leases_none(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Leasing fresh events while older ones wait would serve the newest first, and under a
    lasting overload the oldest would wait for as long as it lasts. Here the worker has room for
    ten seconds of its throughput but claims two at a time: an ingest could lease."""
    fake = helpers.FakePlugin("fifo", events=["release.published"])
    gate = gated(fake)
    await fakes(fake)
    tuned = options(helpers, prefetch_seconds=10.0, claim_batch=2)
    client = await fresh([helpers.entry(fake, max_in_flight=2)], tuned)
    worker = client.app[DELIVERY_WORKER]
    gate.set()
    await settled(client, db, "fifo")  # one call: ten seconds of throughput are ten events
    gate.clear()
    await worker.stop()
    old = [envelope() for _ in range(6)]
    await post_events(client, old)  # stored while no worker ran: nothing leased
    await worker.start(worker.pool)
    await helpers.eventually(lambda: fake.events_in_flight == 2, what="the first claims")
    new = [envelope() for _ in range(3)]
    await post_events(client, new)
    assert await leased_at_ingest(db, worker.options.lease_seconds) == []
    gate.set()
    await until_deliveries(db, [("fifo", "delivered", 1)] * 9)
    assert set(fake.event_ids()[1:7]) == {e["id"] for e in old}


async def test_a_worker_that_died_with_leases_from_an_ingest_loses_nothing(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Its leases end, another worker claims the deliveries, and the attempt nobody recorded is
    recorded as lost, as for a claim."""
    fake = await fakes(helpers.FakePlugin("lease", events=["release.published"]))
    client = await fresh([helpers.entry(fake)], options(helpers))
    worker = client.app[DELIVERY_WORKER]
    event = envelope()
    # The ingest of a replica that dies right after: its statement leased the delivery.
    died = queries.Leases("dead-replica", 0.3, {"lease": 1})
    [incoming] = parse_batch(json.dumps({"events": [event]}).encode(), 10)
    stored = await queries.store_events(worker.pool, [incoming], lambda _type: ["lease"], died)
    assert [(d.plugin, d.attempt) for d in stored.leased] == [("lease", 1)]
    await until_deliveries(db, [("lease", "delivered", 2)])
    assert fake.event_ids() == [event["id"]]
    assert fake.metadata["OnEvent"][-1]["x-attempt"] == "2"
    await assert_lost_attempt_then_delivered(db, "dead-replica")


async def test_a_worker_stopped_while_the_ingest_statement_ran_hands_its_leases_back(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Its queue was handed back already; deliveries leased to it afterwards would otherwise wait
    for their lease to end."""
    fake = await fakes(helpers.FakePlugin("back", events=["release.published"]))
    client = await fresh([helpers.entry(fake)], options(helpers))
    worker = client.app[DELIVERY_WORKER]
    await settled(client, db, "back")
    event = envelope()
    blocker = db.transaction()  # the same event id, uncommitted: the ingest waits for it
    await blocker.start()
    await db.execute(
        """INSERT INTO gateway.events (id, type, source, occurred_at)
           VALUES ($1, 'release.published', 'releases', now())""",
        uuid.UUID(event["id"]),
    )
    ingest = asyncio.create_task(post_events(client, [event]))

    async def ingest_waiting() -> bool:
        await db.execute("SELECT pg_stat_clear_snapshot()")
        return bool(
            await db.fetchval(
                """SELECT count(*) FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND query LIKE 'WITH new AS%'"""
            )
        )

    await helpers.eventually(ingest_waiting, what="the ingest statement waiting")
    await worker.stop()
    await blocker.rollback()
    assert (await ingest).status == 202
    rows = await db.fetch(
        "SELECT lease_owner, attempts, next_attempt_at <= now() AS due FROM gateway.deliveries"
    )
    assert [tuple(r) for r in rows] == [(None, 0, True)]
    assert fake.calls["OnEvent"] == 1  # the warm-up's only


async def test_two_replicas_each_deliver_what_they_leased_at_ingest_exactly_once(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    async with two_replicas(fresh, fakes, helpers, "pair") as (first, second, fake):
        events = [envelope() for _ in range(40)]
        await asyncio.gather(post_events(first, events[:20]), post_events(second, events[20:]))
        await assert_each_delivered_once(db, fake, "pair", events)
