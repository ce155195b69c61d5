"""The outbox relay to the gateway (DESIGN §6): rows leave the outbox only after the gateway
answered 2xx; while the gateway is down they pile up and nothing is lost; the whole path from a
committed change to OnEvent works inside one process, as in `forge serve --all`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from forge_common.config import Settings
from forge_common.db import create_pool
from forge_common.outbox import Event, emit
from forge_common.relay import OutboxRelay, RelayOptions, sign, signature_problem
from forge_gateway.app import create_app

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
async def running_relay(settings: Settings) -> AsyncIterator[OutboxRelay]:
    pool = await create_pool(settings.database_url, max_size=2)
    async with aiohttp.ClientSession() as session:
        relay = OutboxRelay(pool, settings, session, FAST_RELAY)
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
        await asyncio.sleep(0.3)  # several failed rounds against the closed port
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
        # The relay polls every 0.25 s by default.
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=5)
        for _ in range(100):  # the relay deletes the row once the gateway has answered
            if await db.fetchval("SELECT count(*) FROM core.outbox") == 0:
                break
            await asyncio.sleep(0.02)
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0
    assert fake.event_ids() == [event_id]
