"""Delivery under overload (docs/events.md "Under overload"): a gateway slower than the load it
is offered claims no more than it can call, keeps the leases of what it holds, never calls an
event twice, and neither takes nor needs the connections its HTTP handlers answer with."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import asyncpg
from aiohttp.test_utils import TestClient, TestServer
from forge_common.keys import DB_POOL, SETTINGS
from forge_gateway.keys import DELIVERY_WORKER
from forge_gateway.service import create_app
from plugin.v1 import plugin_pb2

from .events_support import envelope, lenient, post_events, until_deliveries

LEASE = 1.5  # seconds; renewed every 0.1 s, so a beat may be 1.4 s late before a lease lapses
CAP = 4  # the plugin's max_in_flight


@contextlib.asynccontextmanager
async def every_connection_of(pool: asyncpg.Pool) -> AsyncIterator[None]:
    """Hold all of `pool`'s connections, as a flood of API requests and ingests would."""
    held = [await pool.acquire() for _ in range(pool.get_max_size())]
    try:
        yield
    finally:
        for conn in held:
            await pool.release(conn)


async def test_a_gateway_slower_than_its_load_calls_each_event_once_with_its_api_pool_taken(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = helpers.FakePlugin("slow", events=["release.published"])
    gate = asyncio.Event()  # the plugin answers nothing until the test opens it

    async def held_until_open(request: Any, metadata: dict[str, str]) -> Any:
        await gate.wait()
        return plugin_pb2.EventResponse(handled=True)

    fake.on_event = held_until_open
    await fakes(fake)
    delivery = replace(helpers.FAST.delivery, lease_seconds=LEASE, heartbeat_interval=0.1)
    options = replace(
        helpers.FAST,
        health_interval=60,
        breaker=replace(lenient(), slow_call_seconds=60),
        delivery=delivery,
    )
    plugin = helpers.entry(fake, max_in_flight=CAP, timeouts={"OnEvent": 60})
    first = await fresh([plugin], options)
    events = [envelope() for _ in range(40)]  # ten times what the gateways can call at once
    await post_events(first, events)
    await helpers.eventually(lambda: fake.events_in_flight == CAP, what="the first gateway's calls")
    # A second replica on the same database takes its share (and would take any lapsed lease).
    second = TestClient(TestServer(create_app(first.app[SETTINGS], options)))
    await second.start_server()
    try:
        await helpers.eventually(lambda: fake.events_in_flight == 2 * CAP, what="both replicas")
        owner = first.app[DELIVERY_WORKER].owner

        async def leases() -> list[float]:
            rows = await db.fetch(
                """SELECT extract(epoch FROM lease_until) AS until FROM gateway.deliveries
                    WHERE lease_owner = $1""",
                owner,
            )
            return [float(r["until"]) for r in rows]

        # Claimed: only what it can call now (its free slots; no throughput measured yet).
        first_leases = await leases()
        assert len(first_leases) == CAP
        async with every_connection_of(first.app[DB_POOL]):
            # The plugin holds every call for three leases and more; the API's pool is all taken.
            # The leases are renewed all the same (the worker's own pool), so none lapses.
            ends = max(first_leases) + 3 * LEASE

            async def renewed_past_three_leases() -> bool:
                held = await leases()
                return len(held) == CAP and min(held) > ends

            await helpers.eventually(renewed_past_three_leases, within=30, what="renewals")
            assert fake.calls["OnEvent"] == 2 * CAP  # nobody called a held event again
            gate.set()
            # The whole backlog is delivered while the API's pool is still taken.
            await until_deliveries(db, [("slow", "delivered", 1)] * len(events), within=30)
        ids = fake.event_ids()
        assert sorted(ids) == sorted(e["id"] for e in events)  # each event called once
        attempts = await db.fetch("SELECT outcome FROM gateway.delivery_attempts")
        assert [a["outcome"] for a in attempts] == ["delivered"] * len(events)
        # And the API answers as before.
        response = await first.get("/readyz")
        assert response.status == 200
    finally:
        gate.set()
        await second.close()


async def test_an_outcome_statement_cut_off_is_recorded_again_not_called_again(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """The outcomes of a statement that failed (its connection cut off, as a statement timeout or
    a database restart does) are kept and recorded again: their deliveries are not dropped, so
    their leases do not lapse and nobody calls them twice."""
    fake = helpers.FakePlugin("cut", events=["release.published"])
    gate = asyncio.Event()

    async def held_until_open(request: Any, metadata: dict[str, str]) -> Any:
        await gate.wait()
        return plugin_pb2.EventResponse(handled=True)

    fake.on_event = held_until_open
    await fakes(fake)
    delivery = replace(helpers.FAST.delivery, lease_seconds=LEASE, heartbeat_interval=0.1)
    options = replace(helpers.FAST, health_interval=60, breaker=lenient(), delivery=delivery)
    client = await fresh(
        [helpers.entry(fake, max_in_flight=CAP, timeouts={"OnEvent": 60})], options
    )
    events = [envelope() for _ in range(CAP)]
    await post_events(client, events)
    await helpers.eventually(lambda: fake.events_in_flight == CAP, what="every call in flight")
    async with db.transaction():  # the outcome statement will wait on these rows
        await db.execute("SELECT id FROM gateway.deliveries FOR UPDATE")
        gate.set()

        async def outcome_statement_waiting() -> int | None:
            # pg_stat_activity is read once per transaction unless its snapshot is cleared
            await db.execute("SELECT pg_stat_clear_snapshot()")
            pid: int | None = await db.fetchval(
                """SELECT pid FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND query LIKE 'WITH outcome AS%'"""
            )
            return pid

        await helpers.eventually(outcome_statement_waiting, within=10, what="the outcomes")
        waiting = await outcome_statement_waiting()
        assert await db.fetchval("SELECT pg_terminate_backend($1)", waiting)
    # The locks are gone; the same outcomes are recorded by the next statement.
    await until_deliveries(db, [("cut", "delivered", 1)] * CAP, within=30)
    # Three leases later nothing was called again (a dropped delivery is due when its lease ends).
    ends = float(await db.fetchval("SELECT extract(epoch FROM now())")) + 3 * LEASE

    async def three_leases_later() -> bool:
        return bool(await db.fetchval("SELECT extract(epoch FROM now()) > $1", ends))

    await helpers.eventually(three_leases_later, within=30, what="three leases")
    assert sorted(fake.event_ids()) == sorted(e["id"] for e in events)
