"""New deliveries leased by the ingest to its own process's worker (docs/events.md "Drain"): only
as many as the worker has room for, none for a plugin that cannot take calls; held, renewed and
handed back like claimed ones; a killed process's leases lapse; claims are not starved."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

from forge_common.keys import DB_POOL
from forge_gateway.events import queries
from forge_gateway.events.ingest import parse_batch
from forge_gateway.keys import DELIVERY_WORKER
from forge_gateway.options import BreakerOptions
from plugin.v1 import plugin_pb2

from .events_support import envelope, post_events, statuses, until_deliveries

# Rows whose lease was taken by the ingest's own statement: a claim runs in a later transaction,
# so its `now()` (and the lease it sets) differs from the row's `created_at`.
LEASED_AT_INGEST = """SELECT count(*) FROM gateway.deliveries
                       WHERE lease_owner = $1
                         AND lease_until = created_at + make_interval(secs => $2)"""


def gated(fake: Any) -> asyncio.Event:
    """OnEvent waits until the returned event is set."""
    gate = asyncio.Event()

    async def handle(request: Any, metadata: dict[str, str]) -> plugin_pb2.EventResponse:
        await gate.wait()
        return plugin_pb2.EventResponse(handled=True)

    fake.on_event = handle
    return gate


def busy(worker: Any, plugin: str, calls: int) -> None:
    """As if the worker had just finished `calls` calls to `plugin`: its recent throughput, which
    sizes the ingest's room beyond the free slots."""
    for _ in range(calls):
        worker._throughput.add(plugin)


async def test_the_ingest_leases_new_deliveries_to_its_worker_as_far_as_it_has_room(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("p", events=["release.published"]))
    gate = gated(fake)
    client = await fresh(
        [helpers.entry(fake, max_in_flight=2, timeouts={"OnEvent": 30})],
        replace(helpers.FAST, health_interval=60),
    )
    worker = client.app[DELIVERY_WORKER]
    events = [envelope() for _ in range(6)]
    assert (await post_events(client, events)).status == 202
    # Nothing delivered yet, so no throughput: the room is the two free slots, given to the
    # batch's first events; the other four are left to claims.
    lease = worker.options.lease_seconds
    assert await db.fetchval(LEASED_AT_INGEST, worker.owner, lease) == 2
    first_two = await db.fetch(
        """SELECT e.id::text FROM gateway.deliveries d JOIN gateway.events e ON e.id = d.event_id
            WHERE d.lease_until = d.created_at + make_interval(secs => $1)""",
        lease,
    )
    assert sorted(r["id"] for r in first_two) == sorted(e["id"] for e in events[:2])
    gate.set()
    await until_deliveries(db, [("p", "delivered", 1)] * 6)
    assert sorted(fake.event_ids()) == sorted(e["id"] for e in events)  # each once
    attempts = await db.fetch("SELECT attempt, outcome FROM gateway.delivery_attempts")
    assert [tuple(a) for a in attempts] == [(1, "delivered")] * 6

    # A resent event is stored once: no new delivery, nothing leased again.
    body = json.dumps({"events": events}).encode()
    again = queries.IngestLease(worker.owner, lease, {"p": 100})
    stored = await queries.store_events(
        client.app[DB_POOL], parse_batch(body, 500), lambda _: ["p"], again
    )
    assert stored == (0, 6, [])
    assert await statuses(db) == [("p", "delivered", 1)] * 6


async def test_no_ingest_lease_for_a_plugin_that_is_down_or_whose_circuit_is_open(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    tripped = await fakes(helpers.FakePlugin("tripped", events=["release.published"]))
    options = replace(
        helpers.FAST,
        health_interval=60,
        breaker=BreakerOptions(open_seconds=60, min_calls=1, slow_call_seconds=2.0),
    )
    down = helpers.entry("down", address=f"127.0.0.1:{helpers.free_port()}")
    client = await fresh([helpers.entry(tripped), down], options)
    worker = client.app[DELIVERY_WORKER]
    lease = worker.ingest_lease()
    assert lease is not None and set(lease.room) == {"tripped"}  # "down" never joined
    worker.release(lease)
    helpers.managed(client, "tripped").breaker.record_call(failed=True, seconds=0.0)
    assert worker.ingest_lease() is None
    assert (await post_events(client, [envelope()])).status == 202
    rows = await db.fetch("SELECT plugin, attempts, lease_owner FROM gateway.deliveries")
    assert sorted(tuple(r) for r in rows) == [("down", 0, None), ("tripped", 0, None)]
    assert tripped.calls["OnEvent"] == 0


async def test_leases_of_a_process_killed_after_the_ingest_commit_lapse_and_are_claimed(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("p", events=["release.published"]))
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, health_interval=60))
    events = [envelope(), envelope()]
    body = json.dumps({"events": events}).encode()
    # The killed process's ingest statement: committed, its deliveries leased to a worker that
    # is gone before it called anything.
    killed = queries.IngestLease("killed-process", 0.3, {"p": 10})
    new, duplicates, leased = await queries.store_events(
        client.app[DB_POOL], parse_batch(body, 500), lambda _: ["p"], killed
    )
    assert (new, duplicates, len(leased)) == (2, 0, 2)
    assert {d.attempt for d in leased} == {1}
    # This process's worker claims them once the leases end, and records the lost attempts.
    await until_deliveries(db, [("p", "delivered", 2)] * 2)
    assert sorted(fake.event_ids()) == sorted(e["id"] for e in events)
    attempts = await db.fetch(
        "SELECT attempt, outcome, error FROM gateway.delivery_attempts ORDER BY attempt"
    )
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [(1, "retry")] * 2 + [
        (2, "delivered")
    ] * 2
    assert all("killed-process" in a["error"] for a in attempts[:2])


async def test_ingested_deliveries_are_renewed_while_queued_and_handed_back_on_stop(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("p", events=["release.published"]))
    gated(fake)
    delivery = replace(helpers.FAST.delivery, lease_seconds=0.5, heartbeat_interval=0.1)
    client = await fresh(
        [helpers.entry(fake, max_in_flight=1, timeouts={"OnEvent": 30})],
        replace(helpers.FAST, health_interval=60, delivery=delivery),
    )
    worker = client.app[DELIVERY_WORKER]
    busy(worker, "p", 100)  # room for all five: one called, four queued
    assert (await post_events(client, [envelope() for _ in range(5)])).status == 202
    assert await db.fetchval(LEASED_AT_INGEST, worker.owner, 0.5) == 5
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, what="one call in flight")

    async def renewed_past_their_first_lease() -> bool:
        held: bool = await db.fetchval(
            """SELECT bool_and(lease_owner = $1 AND attempts = 1 AND lease_until > now()
                               AND now() > created_at + interval '1 second')
                 FROM gateway.deliveries""",
            worker.owner,
        )
        return held

    await helpers.eventually(renewed_past_their_first_lease, within=5, what="leases renewed")
    assert fake.calls["OnEvent"] == 1  # nothing was claimed again meanwhile
    await worker.stop()
    rows = await db.fetch(
        "SELECT attempts, lease_owner, next_attempt_at <= now() AS due FROM gateway.deliveries"
    )
    # Four handed back, not counted; the call in flight interrupted (attempt 1 recorded).
    assert sorted(tuple(r) for r in rows) == [(0, None, True)] * 4 + [(1, None, True)]


async def test_claims_go_on_under_a_sustained_ingest_so_older_deliveries_do_not_starve(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """The ingest hands the worker new deliveries faster than the plugin takes them; older due
    deliveries (stored while no worker took leases) reach the plugin all the same."""
    fake = await fakes(helpers.FakePlugin("p", events=["release.published"]))
    fake.event_delay = 0.01
    client = await fresh(
        [helpers.entry(fake, max_in_flight=1)], replace(helpers.FAST, health_interval=60)
    )
    worker = client.app[DELIVERY_WORKER]
    pool = worker.pool
    await worker.stop()
    older = [envelope() for _ in range(10)]
    await post_events(client, older)  # no worker to lease them to: left for claims
    await worker.start(pool)
    busy(worker, "p", 100)  # the ingest's room stays larger than the plugin's pace
    older_ids = {e["id"] for e in older}
    sent = 0
    async with asyncio.timeout(30):
        while not older_ids <= set(fake.event_ids()):
            assert (await post_events(client, [envelope() for _ in range(20)])).status == 202
            sent += 20
    # The fresh deliveries kept coming (the ingest leased them) and outnumbered the calls.
    assert await db.fetchval(LEASED_AT_INGEST, worker.owner, worker.options.lease_seconds) > 0
    assert fake.calls["OnEvent"] < len(older) + sent
