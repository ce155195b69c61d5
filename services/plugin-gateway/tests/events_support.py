"""Helpers of the event delivery tests (test_events_*.py): envelopes, signed ingest requests, the
deliveries' states and a wait for them. The `fresh` gateway fixture is in conftest.py."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from forge_common.event_signature import sign
from forge_common.keys import SETTINGS
from forge_gateway.events import queries
from forge_gateway.events.ingest import parse_batch
from forge_gateway.options import BreakerOptions
from forge_gateway.service import create_app
from forge_testing.waiting import eventually

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


def nested(depth: int) -> dict[str, Any]:
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


async def store_unleased(pool: Any, events: list[dict[str, Any]], plugins: list[str]) -> None:
    """`events` stored as another replica's ingest stores what its own worker has no room for:
    a delivery to each of `plugins`, due for any worker to claim, announced by NOTIFY."""
    body = json.dumps({"events": events}).encode()
    await queries.store_events(pool, parse_batch(body, len(events)), lambda _type: plugins)


async def store_deliveries(db: Any, count: int, status: str, plugin: str = "p") -> None:
    """`count` events, each with one delivery to `plugin` in `status`, in one statement."""
    await db.execute(
        """WITH new AS (
               INSERT INTO gateway.events (id, type, source, occurred_at)
               SELECT gen_random_uuid(), 'release.published', 'releases', now()
                 FROM generate_series(1, $1)
               RETURNING id)
           INSERT INTO gateway.deliveries (event_id, plugin, status)
           SELECT id, $2, $3 FROM new""",
        count,
        plugin,
        status,
    )


@contextlib.asynccontextmanager
async def two_replicas(
    fresh: Any, fakes: Any, helpers: Any, plugin: str
) -> AsyncIterator[tuple[Any, Any, Any]]:
    """(first, second, fake): two gateway replicas on one database, both delivering to the fake
    plugin `plugin` (10 ms a call)."""
    fake = helpers.FakePlugin(plugin, events=["release.published"])
    fake.event_delay = 0.01
    await fakes(fake)
    first = await fresh([helpers.entry(fake)])
    second = TestClient(TestServer(create_app(first.app[SETTINGS], helpers.FAST)))
    await second.start_server()
    try:
        yield first, second, fake
    finally:
        await second.close()


async def assert_each_delivered_once(
    db: Any, fake: Any, plugin: str, events: list[dict[str, Any]]
) -> None:
    """Every one of `events` delivered to `plugin` by one call and one recorded attempt."""
    await until_deliveries(db, [(plugin, "delivered", 1)] * len(events), within=10)
    assert sorted(fake.event_ids()) == sorted(e["id"] for e in events)  # no duplicates
    outcomes = await db.fetch("SELECT outcome FROM gateway.delivery_attempts")
    assert [r["outcome"] for r in outcomes] == ["delivered"] * len(events)


async def assert_lost_attempt_then_delivered(db: Any, owner: str) -> None:
    """The attempt of `owner`, a worker that never recorded it, recorded as lost (a retry naming
    it) by the worker that claimed the delivery after the lease, whose attempt delivered it."""
    attempts = await db.fetch(
        "SELECT attempt, outcome, error FROM gateway.delivery_attempts ORDER BY attempt"
    )
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [(1, "retry"), (2, "delivered")]
    assert owner in attempts[0]["error"]


async def statuses(db: Any) -> list[tuple[str, str, int]]:
    rows = await db.fetch(
        "SELECT plugin, status, attempts FROM gateway.deliveries ORDER BY plugin, id"
    )
    return [(r["plugin"], r["status"], r["attempts"]) for r in rows]


def lenient() -> BreakerOptions:
    """A breaker that stays closed through a few failed calls (retries are under test)."""
    return BreakerOptions(min_calls=100, open_seconds=0.3)


async def until_deliveries(
    db: Any, expected: list[tuple[str, str, int]], within: float = 5.0
) -> None:
    """Wait until the deliveries are `expected` (plugin, status, attempts), in any order."""

    async def matches() -> bool:
        return sorted(await statuses(db)) == sorted(expected)

    await eventually(matches, within, what=f"deliveries {sorted(expected)}")
