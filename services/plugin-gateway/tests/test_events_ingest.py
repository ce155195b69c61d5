"""Event ingest at the gateway (docs/events.md "Ingest at the gateway"): signed requests only,
the envelope validated, each event stored once with one delivery per subscribed plugin."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest
from forge_common.db import connect
from forge_common.keys import SETTINGS

from .events_support import (
    envelope,
    nested,
    post_events,
    signed,
    statuses,
    until_deliveries,
)


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
        ({"events": [envelope(payload=nested(33))]}, 422),
        ({"events": [envelope(payload=nested(600))]}, 422),
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
    # A new event twice in one batch is stored once, with one delivery.
    again = envelope()
    response = await post_events(client, [again, again])
    assert await response.json() == {"accepted": 1, "duplicates": 1}
    count = "SELECT count(*) FROM gateway.deliveries WHERE event_id = $1::text::uuid"
    assert await db.fetchval(count, again["id"]) == 1


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

    await until_deliveries(db, [("late", "delivered", 1), ("late", "skipped", 1)])
    assert late.event_ids() == [wanted["id"]]


async def test_ingest_names_the_first_bad_field_of_an_event_in_envelope_order(
    gateway: Any,
) -> None:
    client = await gateway([])
    body = json.dumps({"events": [envelope(type="", payload=[1])]}).encode()
    headers = signed(body, client.app[SETTINGS].events_secret)
    response = await client.post("/internal/v1/events", data=body, headers=headers)
    assert response.status == 422
    assert (await response.json())["error"]["message"] == "type must be a non-empty string"
