"""The outbox relay to the gateway (docs/events.md "The relay"): rows leave the outbox only after
the gateway answered 2xx; while the gateway is down they pile up and nothing is lost; the whole path
from a committed change to OnEvent works inside one process, as in `forge serve --all`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from aiohttp.test_utils import TestServer
from forge_common.config import Settings
from forge_common.db import create_pool
from forge_common.event_signature import sign, signature_problem
from forge_common.keys import NOTIFICATIONS
from forge_common.notifications import APPLICATION_NAME
from forge_common.outbox import NOTIFY_CHANNEL, Event, emit
from forge_common.relay import CLAIM, RELAY_TRANSACTION, OutboxRelay, RelayOptions
from forge_gateway.service import create_app
from forge_testing.plans import explained_as_prepared, rows_read
from forge_testing.waiting import eventually

FAST_RELAY = RelayOptions(
    poll_interval=0.05, backoff_initial=0.05, backoff_max=0.2, request_timeout=2.0
)


async def emit_events(db: Any, count: int, payload_size: int = 10) -> list[str]:
    ids = []
    async with db.transaction():
        for index in range(count):
            event = Event(
                "release.published",
                "releases",
                {"n": index, "pad": "x" * payload_size},
                repo_id=1,
            )
            await emit(db, event)
            ids.append(str(event.id))
    return ids


@contextlib.asynccontextmanager
async def running_relay(
    settings: Settings, options: RelayOptions = FAST_RELAY, listen_dsn: str | None = None
) -> AsyncIterator[OutboxRelay]:
    pool = await create_pool(settings.database_url, max_size=2)
    async with aiohttp.ClientSession() as session:
        relay = OutboxRelay(pool, settings, session, options, listen_dsn=listen_dsn)
        task = asyncio.create_task(relay.run())
        try:
            yield relay
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await pool.close()


@contextlib.asynccontextmanager
async def gateway_server(
    settings: Settings, tmp_path: Path, plugins: list[dict[str, Any]], options: Any, port: int
) -> AsyncIterator[TestServer]:
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"plugins": plugins}))
    server = TestServer(create_app(replace(settings, plugins_file=path), options), port=port)
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


def test_signature_covers_timestamp_and_body() -> None:
    body = b'{"events": []}'
    good = sign("s3", 1_700_000_000, body)
    assert signature_problem("s3", "1700000000", good, body, now=1_700_000_100) is None
    assert signature_problem("s3", "1700000001", good, body, now=1_700_000_100) == "bad signature"
    assert signature_problem("s3", "1700000000", good, body + b" ", now=1_700_000_100)
    assert signature_problem("s4", "1700000000", good, body, now=1_700_000_100)
    assert signature_problem("s3", "1700000000", good, body, now=1_700_000_301) == (
        "stale timestamp"
    )
    assert signature_problem("s3", None, good, body, now=0) == "missing signature headers"


async def test_relay_delivers_outbox_rows_and_deletes_them_after_2xx(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    async with gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
        ids = await emit_events(db, 5)
        async with running_relay(producer) as relay:
            await helpers.eventually(lambda: fake.calls["OnEvent"] == 5, what="5 deliveries")
            # Acknowledged rows are deleted once the gateway answered (maybe after delivery).
            await helpers.eventually(lambda: relay.sent == 5, what="the relay's acknowledgement")
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0
    assert sorted(fake.event_ids()) == sorted(ids)


async def test_events_pile_up_while_the_gateway_is_down_and_all_arrive_once_it_is_up(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    async with running_relay(producer):
        first = await emit_events(db, 3)
        for _ in range(1500):  # several failed rounds against the closed port (30 s at most)
            if (await db.fetchval("SELECT max(attempts) FROM core.outbox") or 0) >= 2:
                break
            await asyncio.sleep(0.02)
        more = await emit_events(db, 4)
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 7
        assert await db.fetchval("SELECT max(attempts) FROM core.outbox") >= 2
        async with gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
            await helpers.eventually(lambda: fake.calls["OnEvent"] == 7, what="the backlog")
            await asyncio.sleep(0.1)
    assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0
    assert sorted(fake.event_ids()) == sorted(first + more)  # each exactly once


async def test_rows_stay_when_the_gateway_refuses_the_signature(
    settings: Settings, db: Any, helpers: Any, tmp_path: Path
) -> None:
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/", events_secret="wrong")
    async with gateway_server(settings, tmp_path, [], helpers.FAST, port) as server:
        await emit_events(db, 2)
        async with running_relay(producer):
            for _ in range(100):
                if await db.fetchval("SELECT min(attempts) FROM core.outbox") >= 2:
                    break
                await asyncio.sleep(0.02)
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 2
        assert server is not None


async def test_a_batch_over_the_gateways_body_limit_is_sent_in_halves(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    small = replace(settings, max_body_bytes=4000)
    async with gateway_server(small, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
        ids = await emit_events(db, 12, payload_size=600)  # ~9 KB in one batch
        async with running_relay(producer):
            await helpers.eventually(lambda: fake.calls["OnEvent"] == 12, what="all 12")
    assert sorted(fake.event_ids()) == sorted(ids)


async def test_change_to_on_event_in_one_process_like_serve_all(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    """With GATEWAY_URL set, create_app runs the relay itself: an outbox row written by any
    service reaches the plugin with no other set-up."""
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    itself = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    async with gateway_server(itself, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
        [event_id] = await emit_events(db, 1)
        # NOTIFY wakes the relay at commit; its 1 s polling is only the fallback.
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=5)
        for _ in range(100):  # the relay deletes the row once the gateway has answered
            if await db.fetchval("SELECT count(*) FROM core.outbox") == 0:
                break
            await asyncio.sleep(0.02)
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0
    assert fake.event_ids() == [event_id]


async def test_a_long_backoff_is_cut_short_when_the_gateway_answers_again(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    """While backing off the relay asks the gateway's /readyz every `probe_interval`: events flow
    within about that long of the gateway's return, not after the rest of a long backoff."""
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    patient = replace(FAST_RELAY, backoff_initial=30.0, backoff_max=30.0, probe_interval=0.1)
    async with running_relay(producer, patient):
        ids = await emit_events(db, 3)
        await eventually(
            lambda: db.fetchval("SELECT min(attempts) > 0 FROM core.outbox"), what="a failed send"
        )
        async with gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
            await helpers.eventually(
                lambda: fake.calls["OnEvent"] == 3,
                within=3,
                what="events after the gateway's return",
            )
    assert sorted(fake.event_ids()) == sorted(ids)


# Polling this slowly cannot deliver within the deadlines below: only NOTIFY can.
SLOW_POLL = replace(FAST_RELAY, poll_interval=10.0)


async def test_notify_wakes_the_relay_well_under_its_polling_interval(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    """docs/events.md "The outbox": emit() NOTIFYs at commit and the relay LISTENs, so an event
    reaches the gateway at once, not after a polling interval (here 10 s)."""
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    gateway = gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port)
    async with gateway, running_relay(producer, SLOW_POLL) as relay:
        await asyncio.wait_for(relay.listening.wait(), 5)
        await asyncio.sleep(0.1)  # past the round the relay runs once LISTEN is up
        first = await emit_events(db, 1)
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=2, what="first")
        more = await emit_events(db, 3)  # one transaction, one folded NOTIFY, three events
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 4, within=2, what="more")
    assert sorted(fake.event_ids()) == sorted(first + more)


async def test_a_rolled_back_change_notifies_nothing_and_leaves_no_event(
    settings: Settings, db: Any, database_url: str
) -> None:
    """The event exists exactly when the change committed; so does its wake-up."""
    listener = await asyncpg.connect(database_url)
    heard: list[str] = []
    try:
        await listener.add_listener(NOTIFY_CHANNEL, lambda *args: heard.append(args[2]))
        with contextlib.suppress(RuntimeError):
            async with db.transaction():
                await emit(db, Event("release.published", "releases", {}, repo_id=1))
                raise RuntimeError("roll back")
        await emit_events(db, 2)
        await eventually(lambda: bool(heard), what="the committed change's NOTIFY")
        await asyncio.sleep(0.1)  # a second (unfolded or rolled-back) NOTIFY would be here now
    finally:
        await listener.close()
    assert heard == [NOTIFY_CHANNEL]
    assert await db.fetchval("SELECT count(*) FROM core.outbox") == 2


async def test_without_a_listen_connection_the_relay_still_delivers_by_polling(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path, caplog: Any
) -> None:
    """LISTEN refused (here: nothing listens on its port): the relay warns and polls."""
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    nowhere = f"postgresql://forge@127.0.0.1:{helpers.free_port()}/forge"
    async with gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
        polling = replace(FAST_RELAY, poll_interval=0.2)
        async with running_relay(producer, polling, listen_dsn=nowhere) as relay:
            ids = await emit_events(db, 2)
            await helpers.eventually(lambda: fake.calls["OnEvent"] == 2, what="polled events")
            assert not relay.listening.is_set()
    assert sorted(fake.event_ids()) == sorted(ids)
    assert "LISTEN failed" in caplog.text


async def test_a_dropped_listen_connection_is_reestablished(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    """The database ends the LISTEN session: the relay reconnects (backoff) and NOTIFY wakes it
    again; with 10 s polling, delivery within 2 s proves it is listening once more."""
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    gateway = gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port)
    async with gateway as server, running_relay(producer, SLOW_POLL) as relay:
        await asyncio.wait_for(relay.listening.wait(), 5)
        # The relay's own LISTEN session; the gateway's (its delivery worker's) is left alone.
        gateway_pid = server.app[NOTIFICATIONS].server_pid
        killed = await db.fetchval(
            """SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = $1
                  AND pid IS DISTINCT FROM $2""",
            APPLICATION_NAME,
            gateway_pid,
        )
        assert killed == 1
        await helpers.eventually(lambda: not relay.listening.is_set(), what="the drop")
        await asyncio.wait_for(relay.listening.wait(), 5)
        await asyncio.sleep(0.1)
        ids = await emit_events(db, 1)
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=2, what="event")
    assert fake.event_ids() == ids


async def test_a_claim_reads_only_its_batch_once_prepared_on_a_small_outbox(
    settings: Settings, db: Any
) -> None:
    """The relay's connection prepares its claim once. Planned once for all arguments, as
    PostgreSQL does after a few runs, the plan was made while the outbox was nearly empty and
    kept: a scan and sort of the whole outbox for every claim once a backlog had piled up. The
    relay plans each claim for its own limit, along the index of due rows."""
    fill = """INSERT INTO core.outbox (type, source, payload)
              SELECT 'release.published', 'releases', jsonb_build_object('n', n)
                FROM generate_series(1, $1) AS n"""
    pool = await create_pool(settings.database_url, max_size=1)
    try:
        async with pool.acquire() as conn:
            await db.execute(fill, 50)  # a quiet start: a few events a round
            for _ in range(10):
                async with conn.transaction():
                    await conn.execute(RELAY_TRANSACTION)
                    sent = await conn.fetch(CLAIM, 5, 30.0)
                await conn.execute(
                    "DELETE FROM core.outbox WHERE id = ANY($1)", [r["id"] for r in sent]
                )
            await db.execute(fill, 20000)  # then a backlog
            plan = await explained_as_prepared(conn, CLAIM, 500, 30.0, setup=RELAY_TRANSACTION)
    finally:
        await pool.close()
    read = rows_read(plan, "outbox")
    assert 500 <= read <= 1000, f"the claim read {read} outbox rows for a batch of 500"


async def test_audit_entries_reach_a_subscribed_plugin_through_the_relay(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    """docs/audit.md: each entry is an `audit.recorded` event written with it, so plugins receive
    the audit log through the same lossless relay."""
    from forge_common import audit
    from google.protobuf.json_format import MessageToDict

    fake = await fakes(helpers.FakePlugin("rec", events=["audit.recorded"]))
    port = helpers.free_port()
    producer = replace(settings, gateway_url=f"http://127.0.0.1:{port}/")
    async with gateway_server(settings, tmp_path, [helpers.entry(fake)], helpers.FAST, port):
        async with db.transaction():
            await audit.record(
                db,
                actor="alice",
                kind="release.withdrawn",
                target="acme/app@v1.2.0",
                changes={"withdrawn": (False, True)},
                source="api",
                request_id="req-7",
            )
        async with running_relay(producer):
            await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, what="the delivery")
    [request] = fake.requests["OnEvent"]
    assert request.event_type == "audit.recorded"
    payload = MessageToDict(request.payload)
    assert (payload["kind"], payload["actor"], payload["request_id"]) == (
        "release.withdrawn",
        "alice",
        "req-7",
    )
    assert payload["changes"] == {"withdrawn": {"before": False, "after": True}}
