"""Event delivery by one worker (docs/events.md "Delivery", "Dead letters and redelivery"):
OnEvent with its metadata, retries, dead letters, redelivery, waiting out a plugin's outage,
per-plugin concurrency caps and wake-ups."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc
import pytest
from forge_common.keys import NOTIFICATIONS
from forge_gateway.events import queries as delivery_queries
from forge_gateway.keys import DELIVERY_WORKER
from plugin.v1 import plugin_pb2

from .events_support import (
    ROOT,
    envelope,
    lenient,
    post_events,
    statuses,
    store_unleased,
    until_deliveries,
)


async def test_on_event_carries_the_event_and_its_metadata(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("rec", events=["release.published"]))
    client = await fresh([helpers.entry(fake)])
    event = envelope()
    await post_events(client, [event])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1)
    [request] = fake.requests["OnEvent"]
    assert request.event_type == "release.published"
    assert dict(request.payload) == {
        "tag": "v1.2.0",
        "release_id": 42.0,  # Struct numbers are doubles
        "assets": request.payload["assets"],
    }
    assert request.payload["assets"][0]["name"] == "a.zip"
    assert request.timestamp.ToJsonString() == "2026-01-02T03:04:05.123456Z"
    assert (request.repo_id, request.org_id) == (7, 0)
    [metadata] = fake.metadata["OnEvent"]
    delivery_id = await db.fetchval("SELECT id FROM gateway.deliveries")
    assert metadata["x-event-id"] == event["id"]
    assert metadata["x-delivery-id"] == str(delivery_id)
    assert metadata["x-attempt"] == "1"
    await until_deliveries(db, [("rec", "delivered", 1)])


async def test_transient_failures_are_retried_with_the_same_event_id(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = helpers.FakePlugin("flaky", events=["release.published"])
    answers = [
        plugin_pb2.EventResponse(handled=False, error="database busy"),
        None,  # a crash: UNKNOWN
        plugin_pb2.EventResponse(handled=True),
    ]

    async def on_event(request: Any, metadata: dict[str, str]) -> plugin_pb2.EventResponse:
        answer = answers.pop(0)
        if answer is None:
            raise RuntimeError("crashed")
        return answer

    fake.on_event = on_event
    await fakes(fake)
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, breaker=lenient()))
    event = envelope()
    await post_events(client, [event])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 3, what="three attempts")
    assert fake.event_ids() == [event["id"]] * 3
    assert [m["x-attempt"] for m in fake.metadata["OnEvent"]] == ["1", "2", "3"]
    assert len({m["x-delivery-id"] for m in fake.metadata["OnEvent"]}) == 1
    await until_deliveries(db, [("flaky", "delivered", 3)])
    # Every attempt is kept, and shown to operators.
    delivery_id = fake.metadata["OnEvent"][0]["x-delivery-id"]
    response = await client.get(
        f"/api/v1/admin/plugins/flaky/deliveries/{delivery_id}", headers=ROOT
    )
    shown = await response.json()
    assert shown["status"] == "delivered" and shown["attempts"] == 3
    log = shown["attempt_log"]
    assert [(a["attempt"], a["outcome"]) for a in log] == [
        (1, "retry"),
        (2, "retry"),
        (3, "delivered"),
    ]
    assert log[0]["error"] == "database busy"
    assert log[1]["error"].startswith("UNKNOWN")
    for missing in ("0", "99999", "x"):
        response = await client.get(
            f"/api/v1/admin/plugins/flaky/deliveries/{missing}", headers=ROOT
        )
        assert response.status == 404


async def test_permanent_failure_is_a_dead_letter_at_once_and_can_be_redelivered(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = helpers.FakePlugin("strict", events=["release.published"])
    refuse = True

    async def on_event(request: Any, metadata: dict[str, str]) -> plugin_pb2.EventResponse:
        if refuse:
            raise helpers.Abort(grpc.StatusCode.INVALID_ARGUMENT, "bad payload")
        return plugin_pb2.EventResponse(handled=True)

    fake.on_event = on_event
    await fakes(fake)
    client = await fresh([helpers.entry(fake)])
    await post_events(client, [envelope()])
    await until_deliveries(db, [("strict", "dead", 1)])
    for query in (
        "status=nope",
        "limit=0",
        "limit=",
        "limit=²",
        "limit=501",
        "limit=" + "9" * 5000,
    ):
        response = await client.get(
            f"/api/v1/admin/plugins/strict/deliveries?{query}", headers=ROOT
        )
        assert response.status == 400, query
    response = await client.get("/api/v1/admin/plugins/strict/deliveries?status=dead", headers=ROOT)
    [dead] = await response.json()
    assert dead["status"] == "dead" and "INVALID_ARGUMENT" in dead["last_error"]
    assert (await client.get("/api/v1/admin/plugins/strict/deliveries")).status == 401
    listing = await (await client.get("/api/v1/admin/plugins", headers=ROOT)).json()
    assert listing[0]["deliveries"] == {"pending": 0, "dead": 1}
    # The operator fixed the plugin and redelivers the dead letter.
    refuse = False
    response = await client.post(
        f"/api/v1/admin/plugins/strict/deliveries/{dead['id']}/redeliver", headers=ROOT
    )
    assert response.status == 202
    await until_deliveries(db, [("strict", "delivered", 1)])
    assert fake.calls["OnEvent"] == 2
    # A delivered event can be replayed; the plugin sees the same event id again.
    response = await client.post(
        f"/api/v1/admin/plugins/strict/deliveries/{dead['id']}/redeliver", headers=ROOT
    )
    assert response.status == 202
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 3, what="the replay")
    assert len(set(fake.event_ids())) == 1
    for missing in ("0", "999999", "abc", "1" * 30, "²"):
        response = await client.post(
            f"/api/v1/admin/plugins/strict/deliveries/{missing}/redeliver", headers=ROOT
        )
        assert response.status == 404


async def test_missing_on_event_is_permanent_and_exhausted_retries_are_dead(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    mute = await fakes(
        helpers.FakePlugin("mute", events=["release.published"], missing={"OnEvent"})
    )
    busy = helpers.FakePlugin("busy", events=["release.published"])

    async def never(request: Any, metadata: dict[str, str]) -> plugin_pb2.EventResponse:
        return plugin_pb2.EventResponse(handled=False, error="try later")

    busy.on_event = never
    await fakes(busy)
    client = await fresh([helpers.entry(mute), helpers.entry(busy)])
    await post_events(client, [envelope()])
    await until_deliveries(db, [("busy", "dead", 3), ("mute", "dead", 1)])
    assert busy.calls["OnEvent"] == 3  # FAST: max 3 attempts
    error = await db.fetchval("SELECT last_error FROM gateway.deliveries WHERE plugin = 'mute'")
    assert error.startswith("UNIMPLEMENTED")
    response = await client.post("/api/v1/admin/plugins/busy/deliveries/redeliver", headers=ROOT)
    assert await response.json() == {"redelivered": 1}
    await helpers.eventually(lambda: busy.calls["OnEvent"] == 6, what="a second round")


async def test_deliveries_wait_without_spending_attempts_while_the_plugin_is_down(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("nap", events=["release.published"]))
    client = await fresh([helpers.entry(fake)])
    port = fake.port
    await fake.stop(0)
    plugin = client.app[DELIVERY_WORKER].manager.get("nap")
    await helpers.eventually(lambda: plugin.state == "down", what="plugin marked down")
    await post_events(client, [envelope(), envelope()])
    await asyncio.sleep(0.3)  # several poll intervals
    assert await statuses(db) == [("nap", "pending", 0), ("nap", "pending", 0)]
    back = helpers.FakePlugin("nap", events=["release.published"])
    await fakes(back, port)
    await until_deliveries(db, [("nap", "delivered", 1), ("nap", "delivered", 1)])
    assert back.calls["OnEvent"] == 2


async def test_concurrency_cap_per_plugin_isolates_a_slow_plugin(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    slow = helpers.FakePlugin("slow", events=["release.published"])
    slow.event_delay = 0.3
    quick = helpers.FakePlugin("quick", events=["release.published"])
    await fakes(slow)
    await fakes(quick)
    options = replace(helpers.FAST, delivery=replace(helpers.FAST.delivery, concurrency=2))
    client = await fresh(
        [helpers.entry(slow, timeouts={"OnEvent": 5}), helpers.entry(quick)], options
    )
    await post_events(client, [envelope() for _ in range(6)])
    # The quick plugin is served while the slow one still works through its queue.
    await helpers.eventually(lambda: quick.calls["OnEvent"] == 6, within=2)
    assert slow.calls["OnEvent"] < 6
    await helpers.eventually(lambda: slow.calls["OnEvent"] == 6, within=5)
    assert slow.max_events_in_flight == 2


async def test_a_plugin_back_from_an_outage_gets_its_backlog_without_waiting_for_a_poll(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """Polling every 30 s: only the plugin's return (ready again) can wake the worker in time."""
    fake = await fakes(helpers.FakePlugin("nap", events=["release.published"]))
    slow_polling = replace(helpers.FAST.delivery, poll_interval=30)
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, delivery=slow_polling))
    port = fake.port
    await fake.stop(0)
    plugin = client.app[DELIVERY_WORKER].manager.get("nap")
    await helpers.eventually(lambda: plugin.state == "down", what="plugin marked down")
    await post_events(client, [envelope(), envelope()])  # NOTIFY wakes it; the plugin is down
    await asyncio.sleep(0.3)
    back = await fakes(helpers.FakePlugin("nap", events=["release.published"]), port)
    await helpers.eventually(lambda: back.calls["OnEvent"] == 2, within=3, what="the backlog")


async def test_max_in_flight_in_the_plugins_file_sets_one_plugins_cap(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """docs/plugins.md "The plugins file": `max_in_flight` overrides the gateway's default for
    that plugin only."""
    narrow = helpers.FakePlugin("narrow", events=["release.published"])
    wide = helpers.FakePlugin("wide", events=["release.published"])
    for fake in (narrow, wide):
        fake.event_delay = 0.2
        await fakes(fake)
    options = replace(helpers.FAST, delivery=replace(helpers.FAST.delivery, concurrency=3))
    client = await fresh(
        [helpers.entry(narrow, max_in_flight=1), helpers.entry(wide, max_in_flight=6)], options
    )
    await post_events(client, [envelope() for _ in range(6)])
    await helpers.eventually(lambda: wide.calls["OnEvent"] == 6, within=3)
    await helpers.eventually(lambda: narrow.calls["OnEvent"] == 6, within=5)
    assert narrow.max_events_in_flight == 1
    assert wide.max_events_in_flight > 3  # above the gateway's default of 3 here


async def test_notify_wakes_the_worker_and_its_listen_connection_comes_back(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """With polling every 30 s, only LISTEN/NOTIFY can deliver within seconds what another
    replica's ingest stored; after the process's LISTEN connection (`app[NOTIFICATIONS]`) is
    killed, say the database restarted, the worker is woken by NOTIFY again."""
    fake = await fakes(helpers.FakePlugin("quick", events=["release.published"]))
    slow_polling = replace(helpers.FAST.delivery, poll_interval=30)
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, delivery=slow_polling))
    notifications = client.app[NOTIFICATIONS]
    await asyncio.wait_for(notifications.listening.wait(), 5)
    pool = client.app[DELIVERY_WORKER].pool
    await store_unleased(pool, [envelope()], ["quick"])
    # within 10 s: only NOTIFY can deliver it before the 30 s poll, on however loaded a machine
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=10, what="NOTIFY")
    pid = notifications.server_pid
    assert pid is not None
    await db.execute("SELECT pg_terminate_backend($1)", pid)
    await helpers.eventually(
        lambda: notifications.listening.is_set() and notifications.server_pid not in (None, pid),
        within=5,
        what="a new LISTEN connection",
    )
    await store_unleased(pool, [envelope()], ["quick"])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 2, within=10, what="NOTIFY again")


async def test_a_notify_during_a_claim_that_read_the_table_before_it_is_not_lost(
    fresh: Any, fakes: Any, helpers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NOTIFY that wakes the worker while a claim is under way, one that read the table before
    the delivery was stored, has another claim follow it: with polling every 30 s, the delivery
    still arrives within seconds (a claim is slow on a busy machine; this wake-up was lost)."""
    fake = await fakes(helpers.FakePlugin("quick", events=["release.published"]))
    slow_polling = replace(helpers.FAST.delivery, poll_interval=30)
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, delivery=slow_polling))
    await asyncio.wait_for(client.app[NOTIFICATIONS].listening.wait(), 5)
    worker = client.app[DELIVERY_WORKER]
    read, finish = asyncio.Event(), asyncio.Event()
    real_claim = delivery_queries.claim

    async def claim_then_hold(*args: Any) -> Any:
        claimed = await real_claim(*args)  # the table as it is now: no delivery yet
        read.set()
        await finish.wait()  # returns after the delivery is stored and announced
        return claimed

    monkeypatch.setattr(delivery_queries, "claim", claim_then_hold)
    worker.wake()
    await asyncio.wait_for(read.wait(), 5)
    await store_unleased(worker.pool, [envelope()], ["quick"])
    # the NOTIFY's round found the claim under way (a private flag: no other sign of it)
    await helpers.eventually(lambda: worker._claim_again, within=5, what="a round during the claim")
    monkeypatch.setattr(delivery_queries, "claim", real_claim)
    finish.set()
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=10, what="the delivery")
