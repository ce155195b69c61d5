"""Event delivery (docs/events.md "Ingest at the gateway", "Delivery", "Dead letters and
redelivery"): signed ingest storing each event once, one delivery per subscribed plugin, OnEvent
with metadata, retries, dead letters, redelivery, per-plugin concurrency, several workers,
leases."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest
from aiohttp.test_utils import TestClient, TestServer
from forge_common.config import Settings
from forge_common.db import connect
from forge_common.keys import NOTIFICATIONS, SETTINGS
from forge_common.relay import sign
from forge_common.testing.waiting import eventually
from forge_gateway.app import create_app
from forge_gateway.events import delivery, store
from forge_gateway.keys import DELIVERY_WORKER
from forge_gateway.options import BreakerOptions, Options
from plugin.v1 import plugin_pb2

ROOT = {"Authorization": "token root-token"}
WORLD = {"users": [{"name": "root", "admin": True, "tokens": ["root-token"]}]}


def envelope(event_type: str = "release.published", **extra: Any) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "type": event_type,
        "occurred_at": "2026-01-02T03:04:05.123456Z",
        "source": "releases",
        "repo_id": 7,
        "org_id": None,
        "actor_id": 1,
        "payload": {"tag": "v1.2.0", "release_id": 42, "assets": [{"name": "a.zip"}]},
        **extra,
    }


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": [value]} if depth % 2 else {"a": value}
    return value


def signed(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    stamp = int(time.time()) if timestamp is None else timestamp
    return {
        "Content-Type": "application/json",
        "X-Forge-Timestamp": str(stamp),
        "X-Forge-Signature": sign(secret, stamp, body),
    }


async def post_events(client: Any, events: list[dict[str, Any]]) -> Any:
    body = json.dumps({"events": events}).encode()
    headers = signed(body, client.app[SETTINGS].events_secret)
    return await client.post("/internal/v1/events", data=body, headers=headers)


@pytest.fixture
def fresh(aiohttp_client: Any, settings: Settings, tmp_path: Path, load: Any, helpers: Any) -> Any:
    """`client = await fresh([entry(...)], options)`: a gateway on a fresh database."""

    async def make(plugins: list[dict[str, Any]], options: Options | None = None) -> Any:
        await load(WORLD)
        path = tmp_path / "plugins.json"
        path.write_text(json.dumps({"plugins": plugins}))
        app = create_app(replace(settings, plugins_file=path), options or helpers.FAST)
        return await aiohttp_client(app)

    return make


async def statuses(db: Any) -> list[tuple[str, str, int]]:
    rows = await db.fetch(
        "SELECT plugin, status, attempts FROM gateway.deliveries ORDER BY plugin, id"
    )
    return [(r["plugin"], r["status"], r["attempts"]) for r in rows]


# Ingest ----------------------------------------------------------------------------------------


async def event_count(database_url: str) -> int:
    conn = await connect(database_url)
    try:
        count: int = await conn.fetchval("SELECT count(*) FROM gateway.events")
        return count
    finally:
        await conn.close()


# These two tests store nothing, so they use the shared database (`gateway`), not a fresh one.
async def test_ingest_refuses_unsigned_wrongly_signed_and_stale_requests(
    gateway: Any, gateway_world: Any
) -> None:
    client = await gateway([])
    before = await event_count(gateway_world.settings.database_url)
    body = json.dumps({"events": [envelope()]}).encode()
    secret = client.app[SETTINGS].events_secret
    cases = [
        {},
        signed(body, "another-secret"),
        signed(body, secret, timestamp=int(time.time()) - 3600),  # replayed an hour later
        signed(body, secret, timestamp=int(time.time()) + 3600),
        {**signed(body, secret), "X-Forge-Timestamp": "soon"},
        {**signed(body, secret), "X-Forge-Timestamp": "¹²³"},  # digits, but not ASCII ones
        {**signed(body, secret), "X-Forge-Signature": "sha256=00"},
    ]
    for headers in cases:
        response = await client.post("/internal/v1/events", data=body, headers=headers)
        assert response.status == 401, headers
        error = (await response.json())["error"]
        assert error["code"] == "EventSignatureInvalid"
    # A body changed after signing fails too.
    headers = signed(body, secret)
    response = await client.post("/internal/v1/events", data=body + b" ", headers=headers)
    assert response.status == 401
    assert await event_count(gateway_world.settings.database_url) == before


@pytest.mark.parametrize(
    ("events", "status"),
    [
        ("not json", 400),
        ({"nope": []}, 422),
        ({"events": [{"id": "x"}]}, 422),
        ({"events": [envelope(occurred_at="yesterday")]}, 422),
        ({"events": [envelope(occurred_at="2026-01-02T03:04:05")]}, 422),
        ({"events": [envelope(occurred_at="0001-01-01T00:00:00+01:00")]}, 422),
        ({"events": [envelope(type="")]}, 422),
        ({"events": [envelope(repo_id="7")]}, 422),
        ({"events": [envelope(payload=[1])]}, 422),
        ({"events": [envelope(payload={"a": "nul\u0000"})]}, 422),
        ({"events": [envelope(payload=_nested(33))]}, 422),
        ({"events": [envelope(payload=_nested(600))]}, 422),
        ({"events": [envelope(source="a\u0000b")]}, 422),
    ],
)
async def test_ingest_validates_the_envelope(
    gateway: Any, gateway_world: Any, events: Any, status: int
) -> None:
    client = await gateway([])
    before = await event_count(gateway_world.settings.database_url)
    body = events.encode() if isinstance(events, str) else json.dumps(events).encode()
    headers = signed(body, client.app[SETTINGS].events_secret)
    response = await client.post("/internal/v1/events", data=body, headers=headers)
    assert response.status == status
    assert await event_count(gateway_world.settings.database_url) == before


async def test_ingest_stores_each_event_once_with_one_delivery_per_subscribed_plugin(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    releases = await fakes(helpers.FakePlugin("rel", events=["release.published"]))
    pins = await fakes(helpers.FakePlugin("pins", events=["org.pin.created"]))
    client = await fresh(
        [helpers.entry(releases), helpers.entry(pins)], replace(helpers.FAST, health_interval=60)
    )
    releases.hang = pins.hang = True  # keep deliveries in flight: this test looks at ingest
    published, pinned = envelope(), envelope("org.pin.created", repo_id=None, org_id=3)
    response = await post_events(client, [published, pinned])
    assert response.status == 202
    assert await response.json() == {"accepted": 2, "duplicates": 0}
    # The relay resends after a lost answer: nothing changes.
    response = await post_events(client, [published, pinned, published])
    assert await response.json() == {"accepted": 0, "duplicates": 3}
    assert await db.fetchval("SELECT count(*) FROM gateway.events") == 2
    rows = await db.fetch("SELECT event_id::text, plugin FROM gateway.deliveries ORDER BY plugin")
    assert [(r["event_id"], r["plugin"]) for r in rows] == [
        (pinned["id"], "pins"),
        (published["id"], "rel"),
    ]


async def test_plugin_down_at_ingest_still_gets_a_delivery_and_unsubscribed_ones_are_skipped(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    """While its manifest is unknown a plugin gets every event; once it joins, OnEvent is
    called only for the types it subscribed to (docs/events.md "Ingest at the gateway")."""
    port = helpers.free_port()
    client = await fresh([helpers.entry("late", address=f"127.0.0.1:{port}")])
    wanted, unwanted = envelope(), envelope("org.pin.deleted")
    assert (await post_events(client, [wanted, unwanted])).status == 202
    assert len(await statuses(db)) == 2
    late = await fakes(helpers.FakePlugin("late", events=["release.published"]), port)
    await helpers.eventually(lambda: late.calls["OnEvent"] == 1, what="delivery after joining")

    await _until(db, [("late", "delivered", 1), ("late", "skipped", 1)])
    assert late.event_ids() == [wanted["id"]]


# Delivery --------------------------------------------------------------------------------------


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
    await _until(db, [("rec", "delivered", 1)])


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
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, breaker=_lenient()))
    event = envelope()
    await post_events(client, [event])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 3, what="three attempts")
    assert fake.event_ids() == [event["id"]] * 3
    assert [m["x-attempt"] for m in fake.metadata["OnEvent"]] == ["1", "2", "3"]
    assert len({m["x-delivery-id"] for m in fake.metadata["OnEvent"]}) == 1
    await _until(db, [("flaky", "delivered", 3)])
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
    await _until(db, [("strict", "dead", 1)])
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
    await _until(db, [("strict", "delivered", 1)])
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
    await _until(db, [("busy", "dead", 3), ("mute", "dead", 1)])
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
    await _until(db, [("nap", "delivered", 1), ("nap", "delivered", 1)])
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
    """With polling every 30 s, only LISTEN/NOTIFY can deliver within seconds; after the
    process's LISTEN connection (`app[NOTIFICATIONS]`) is killed, say the database restarted,
    the worker is woken by NOTIFY again."""
    fake = await fakes(helpers.FakePlugin("quick", events=["release.published"]))
    slow_polling = replace(helpers.FAST.delivery, poll_interval=30)
    client = await fresh([helpers.entry(fake)], replace(helpers.FAST, delivery=slow_polling))
    notifications = client.app[NOTIFICATIONS]
    await asyncio.wait_for(notifications.listening.wait(), 5)
    await post_events(client, [envelope()])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=3, what="NOTIFY")
    pid = notifications.server_pid
    assert pid is not None
    await db.execute("SELECT pg_terminate_backend($1)", pid)
    await helpers.eventually(
        lambda: notifications.listening.is_set() and notifications.server_pid not in (None, pid),
        within=5,
        what="a new LISTEN connection",
    )
    await post_events(client, [envelope()])
    await helpers.eventually(lambda: fake.calls["OnEvent"] == 2, within=3, what="NOTIFY again")


# Several workers and leases ------------------------------------------------------------------


async def test_two_workers_deliver_each_event_exactly_once(
    fresh: Any, fakes: Any, helpers: Any, db: Any
) -> None:
    fake = helpers.FakePlugin("shared", events=["release.published"])
    fake.event_delay = 0.01
    await fakes(fake)
    first = await fresh([helpers.entry(fake)])
    # A second gateway replica on the same database and plugin.
    second = TestClient(TestServer(create_app(first.app[SETTINGS], helpers.FAST)))
    await second.start_server()
    try:
        events = [envelope() for _ in range(40)]
        await post_events(first, events[:20])
        await post_events(second, events[20:])
        await helpers.eventually(lambda: fake.calls["OnEvent"] >= 40, within=10)
        await _until(db, [("shared", "delivered", 1)] * 40)
        assert sorted(fake.event_ids()) == sorted(e["id"] for e in events)  # no duplicates
        outcomes = await db.fetch("SELECT outcome FROM gateway.delivery_attempts")
        assert [r["outcome"] for r in outcomes] == ["delivered"] * 40  # one attempt each
    finally:
        await second.close()


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
    [claimed] = await store.claim(pool, "lease", 10, "crashed-worker", lease_seconds=0.3)
    assert claimed.attempt == 1
    # While the lease lasts, no other worker can claim it.
    assert await store.claim(pool, "lease", 10, "other", lease_seconds=5) == []
    await worker.start(pool)
    await _until(db, [("lease", "delivered", 2)])
    assert fake.metadata["OnEvent"][-1]["x-attempt"] == "2"
    # The crashed worker's late outcome is ignored: the delivery is not its own any more.
    assert not await store.finish(pool, claimed, "crashed-worker", outcome="dead")
    assert await statuses(db) == [("lease", "delivered", 2)]
    # Its attempt, whose outcome nobody knows, is recorded all the same (by the next claimer).
    attempts = await db.fetch(
        "SELECT attempt, outcome, error FROM gateway.delivery_attempts ORDER BY attempt"
    )
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [(1, "retry"), (2, "delivered")]
    assert "crashed-worker" in attempts[0]["error"]


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
    old, new = await store.claim(pool, "beat", 10, "w", lease_seconds=10)
    await db.execute("UPDATE gateway.deliveries SET lease_until = now() + interval '1 second'")
    await db.execute(
        "UPDATE gateway.deliveries SET lease_until = now() + interval '9 seconds' WHERE id = $1",
        new.id,
    )
    assert await store.renew(pool, "w", [old.id, new.id], 10, ending_within=8) == 1
    rows = await db.fetch(
        "SELECT id, lease_until - now() AS left FROM gateway.deliveries ORDER BY id"
    )
    left = {r["id"]: r["left"].total_seconds() for r in rows}
    assert 9 < left[old.id] <= 10  # renewed for a whole lease
    assert 8 < left[new.id] <= 9  # untouched
    assert await store.claim(pool, "beat", 10, "other", lease_seconds=5) == []


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
    assert await store.claim(pool, "long", 10, "other", lease_seconds=5) == []
    await _until(db, [("long", "delivered", 1)])
    assert fake.calls["OnEvent"] == 1


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
    pool = client.app[DELIVERY_WORKER].pool
    assert await store.prune(pool, older_than_days=7) == 1
    kept = {r["id"] for r in await db.fetch("SELECT id::text FROM gateway.events")}
    assert kept == {dead["id"], pending["id"], fresh_event["id"]}


# Helpers -----------------------------------------------------------------------------------


def _lenient() -> BreakerOptions:
    """A breaker that stays closed through a few failed calls (retries are under test)."""
    return BreakerOptions(min_calls=100, open_seconds=0.3)


async def _until(db: Any, expected: list[tuple[str, str, int]], within: float = 5.0) -> None:
    """Wait until the deliveries are `expected` (plugin, status, attempts), in any order."""

    async def matches() -> bool:
        return sorted(await statuses(db)) == sorted(expected)

    await eventually(matches, within, what=f"deliveries {sorted(expected)}")
