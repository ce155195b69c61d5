"""Insights counting (docs/insights.md): exact counts after a known mix of update checks, feed
answers and downloads; two replicas add up; what a process that dies unannounced loses; nothing
but the counted dimensions reaches the database; retention."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_common.keys import DB_POOL, NOTIFICATIONS
from forge_releases.insights import queries
from forge_releases.insights.counter import InsightsCounter
from forge_releases.insights.dimensions import Defaults
from forge_releases.keys import INSIGHTS
from forge_releases.options import Options
from forge_releases.service import create_app
from forge_testing.server import ForgeTestServer
from forge_testing.waiting import eventually

from .support import FAST, TOKENS, UPDATE, one_repo, rel

Client = TestClient[Any, Any]
# no write in the background unless a test asks for one: the tests flush when they choose
MANUAL = Options(insights_flush_interval=3600.0)
WORLD = one_repo(
    [
        rel("v1.0.0", 1, "App-1.0.0-arm64.zip", "App-1.0.0-x64.zip"),
        rel(
            "v1.1.0",
            2,
            "App-1.1.0-arm64.zip",
            "App-1.1.0-x64.zip",
            "App-1.1.0-setup.exe",
            "App-1.1.0-full.nupkg",
        ),
        rel("v1.2.0-beta.1", 3, "App-1.2.0-beta.1-arm64.zip", prerelease=True),
    ]
)


async def replica(settings: Settings, aiohttp_client: Any, options: Options = MANUAL) -> Client:
    app = create_app(settings, options, FAST)
    client: Client = await aiohttp_client(ForgeTestServer(app))
    await asyncio.wait_for(app[NOTIFICATIONS].listening.wait(), 10)
    return client


async def checks(client: Client, n: int, query: str, status: int, **headers: str) -> None:
    for _ in range(n):
        resp = await client.get(f"{UPDATE}?{query}", headers=headers)
        assert resp.status == status, await resp.text()
        await resp.read()


async def by(db: Any, kind: str, dim: str) -> dict[str, int]:
    rows = await db.fetch(
        "SELECT value, sum(n)::bigint AS n FROM releases.insights_monthly_by, unnest(counts) n"
        " WHERE kind = $1 AND dim = $2 GROUP BY value",
        kind,
        dim,
    )
    return {r["value"]: r["n"] for r in rows}


async def total(db: Any, table: str = "insights_daily") -> int:
    if table == "insights_monthly_by":
        sql = "SELECT coalesce(sum(n), 0) FROM releases.insights_monthly_by, unnest(counts) n"
        return int(await db.fetchval(sql))
    return int(await db.fetchval(f"SELECT coalesce(sum(n), 0) FROM releases.{table}"))


async def test_exact_counts_after_a_known_mix(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(WORLD)
    client = await replica(settings, aiohttp_client)
    # the first of each is computed, the rest answered before routing (the fast path)
    await checks(client, 7, "version=1.0.0&platform=darwin&arch=arm64", 200)
    await checks(client, 5, "version=1.1.0&platform=darwin&arch=arm64", 204)
    await checks(client, 3, "version=v1.0.0&platform=darwin&arch=arm64&channel=beta", 200)
    await checks(client, 2, "version=1.0.0&platform=windows&arch=x64", 200)
    await checks(
        client, 2, "version=1.0.0&platform=darwin&arch=arm64", 200, **{"If-None-Match": "x"}
    )
    await checks(client, 4, "version=junk&platform=darwin", 400)  # refused: not counted
    for _ in range(2):  # update.electronjs.org's Squirrel.Mac shape
        resp = await client.get("/owner/app/darwin-arm64/1.0.0")
        assert resp.status == 200
    for _ in range(3):
        resp = await client.get("/owner/app/releases/download/v1.1.0/App-1.1.0-setup.exe")
        assert resp.status == 200
        await resp.read()
    resp = await client.get(
        "/owner/app/releases/download/v1.1.0/App-1.1.0-setup.exe", headers={"Range": "bytes=0-1"}
    )
    assert resp.status == 206  # a partial download is not a completed one
    await resp.read()

    assert await client.app[INSIGHTS].flush(client.app[DB_POOL]) == 7 + 5 + 3 + 2 + 2 + 2 + 3
    assert await by(db, "check", "running") == {"1.0.0": 7 + 3 + 2 + 2 + 2, "1.1.0": 5}
    assert await by(db, "check", "offered") == {"1.1.0": 7 + 2 + 2 + 2, "": 5, "1.2.0-beta.1": 3}
    assert await by(db, "check", "platform") == {"darwin": 19, "windows": 2}
    assert await by(db, "check", "arch") == {"arm64": 19, "x64": 2}
    assert await by(db, "check", "channel") == {"stable": 18, "beta": 3}
    assert await by(db, "check", "feed") == {"update": 19, "squirrel-mac": 2}
    assert await by(db, "download", "file") == {"App-1.1.0-setup.exe": 3}
    assert await by(db, "download", "offered") == {"1.1.0": 3}
    assert await by(db, "download", "platform") == {"windows": 3}
    # the three tables agree
    assert await total(db) == await total(db, "insights_hourly") == 24
    assert await total(db, "insights_monthly_by") == 24 * 7  # one row per dimension
    # a second flush with nothing new writes nothing
    assert await client.app[INSIGHTS].flush(client.app[DB_POOL]) == 0
    assert await total(db) == 24


async def test_two_replicas_add_up(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(WORLD)
    a = await replica(settings, aiohttp_client)
    b = await replica(settings, aiohttp_client)
    query = "version=1.0.0&platform=darwin&arch=arm64"
    await checks(a, 6, query, 200)
    await checks(b, 9, query, 200)
    await asyncio.gather(
        a.app[INSIGHTS].flush(a.app[DB_POOL]), b.app[INSIGHTS].flush(b.app[DB_POOL])
    )
    await checks(a, 1, query, 200)
    await a.app[INSIGHTS].flush(a.app[DB_POOL])
    assert await by(db, "check", "running") == {"1.0.0": 16}
    assert await total(db, "insights_hourly") == 16


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_counts_reach_the_database_within_the_flush_interval_without_shutdown(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    """What a process killed without stopping loses: only what it counted since its last write,
    at most one interval (here 0.2 s; in production Options.insights_flush_interval, 2 s)."""
    await load(WORLD)
    interval = 0.2
    client = await replica(settings, aiohttp_client, Options(insights_flush_interval=interval))
    await checks(client, 25, "version=1.0.0&platform=darwin&arch=arm64", 200)
    done = time.monotonic()

    async def written() -> bool:
        return await total(db) == 25

    await eventually(written, within=10, what="the counts to be written")
    waited = time.monotonic() - done
    # one interval, plus the write itself on a busy machine
    assert waited < interval + 2.0, waited
    assert client.app[INSIGHTS].pending() == 0  # nothing left that a crash now could lose


async def test_a_failed_write_keeps_its_counts(settings: Settings, load: Any, db: Any) -> None:
    await load(WORLD)
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    counter = InsightsCounter(Defaults("linux", "x64"))
    counter.checked(repo_id, "version=1.0.0", b"")
    counter.checked(repo_id, "version=1.0.0", b"")

    class Down:
        async def execute(self, *args: Any) -> None:
            raise OSError("connection refused")

    with pytest.raises(OSError):
        await counter.flush(Down())  # type: ignore[arg-type]
    assert counter.pending() == 2
    assert await counter.flush(db) == 2
    assert await by(db, "check", "running") == {"1.0.0": 2}


async def test_the_hour_boundary_splits_counts(settings: Settings, load: Any, db: Any) -> None:
    await load(WORLD)
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    now = [datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC).timestamp()]
    counter = InsightsCounter(Defaults("linux", "x64"), clock=lambda: now[0])
    counter.checked(repo_id, "version=1.0.0", b"")
    now[0] += 2  # the next day
    counter.roll()
    counter.checked(repo_id, "version=1.0.0", b"")
    counter.checked(repo_id, "version=1.0.0", b"")
    assert await counter.flush(db) == 3
    rows = await db.fetch("SELECT day, n FROM releases.insights_daily ORDER BY day")
    assert [(str(r["day"]), r["n"]) for r in rows] == [("2026-03-01", 1), ("2026-03-02", 2)]
    hours = await db.fetch("SELECT hour, n FROM releases.insights_hourly ORDER BY hour")
    assert [r["hour"].hour for r in hours] == [23, 0]


async def test_no_request_data_but_the_counted_dimensions_reaches_the_database(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(WORLD)
    client = await replica(settings, aiohttp_client)
    marker = "zq7marker"
    headers = {
        "User-Agent": f"App/1.0 {marker}",
        "X-Forwarded-For": "203.0.113.77",
        "X-Request-Id": f"{marker}-id",
        "Cookie": f"session={marker}",
    }
    # extra parameters (Squirrel appends `id` and `localVersion`), free text where a dimension
    # is expected, a token: none of it may be stored
    await checks(client, 2, f"version=1.0.0&platform=darwin&arch=arm64&id={marker}", 200, **headers)
    await checks(client, 1, f"version=1.0.0&platform={marker}&arch={marker}&channel={marker}!", 204)
    await checks(
        client,
        1,
        "version=1.0.0&platform=darwin&arch=arm64",
        200,
        Authorization=f"token {TOKENS['owner']}",
    )
    resp = await client.get(
        f"/api/v2/repos/owner/app/releases/feeds/squirrel/x64/RELEASES?id={marker}&localVersion=1.0.0",
        headers=headers,
    )
    assert resp.status == 200, await resp.text()
    assert await client.app[INSIGHTS].flush(client.app[DB_POOL]) == 5
    stored = ""
    for table in ("insights_hourly", "insights_daily", "insights_monthly_by"):
        stored += " ".join(str(dict(r)) for r in await db.fetch(f"SELECT * FROM releases.{table}"))
    for secret in (marker, "203.0.113", TOKENS["owner"], "App/1.0", "session"):
        assert secret not in stored
    # free text where a dimension is expected is stored as `other`
    assert (await by(db, "check", "platform"))["other"] == 1
    assert (await by(db, "check", "channel"))["other"] == 1
    columns = await db.fetch(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'releases' AND table_name LIKE 'insights%'"
    )
    assert {c["column_name"] for c in columns} == {
        "repo_id", "hour", "day", "kind", "feed", "running", "offered", "platform", "arch",
        "channel", "file", "dim", "value", "n", "month", "counts",
        "path", "inode", "position",  # how far nginx's log is read: configuration, not requests
    }  # fmt: skip


async def test_retention_prunes_old_rows(settings: Settings, load: Any, db: Any) -> None:
    await load(WORLD)
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    now = datetime(2026, 6, 1, 12, tzinfo=UTC)
    for at in (
        now - timedelta(days=450),
        now - timedelta(days=401),
        now - timedelta(days=3),
        now - timedelta(hours=1),
    ):
        counter = InsightsCounter(Defaults("linux", "x64"), clock=at.timestamp)
        counter.checked(repo_id, "version=1.0.0", b"")
        await counter.flush(db)
    await queries.prune(db, now, 400)
    days = [
        str(r["day"])
        for r in await db.fetch("SELECT day FROM releases.insights_daily ORDER BY day")
    ]
    assert days == ["2026-05-29", "2026-06-01"]
    hours = await db.fetch("SELECT hour FROM releases.insights_hourly")
    assert [r["hour"] for r in hours] == [now - timedelta(hours=1)]
    months = await db.fetch("SELECT DISTINCT month FROM releases.insights_monthly_by ORDER BY 1")
    # a month's sums stay until its last day is past retention (2025-04-26 is in April 2025)
    assert [str(r["month"]) for r in months] == ["2025-04-01", "2026-05-01", "2026-06-01"]


async def test_insights_off_counts_nothing(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(WORLD)
    client = await replica(replace(settings, insights_enabled=False), aiohttp_client)
    await checks(client, 3, "version=1.0.0&platform=darwin&arch=arm64", 200)
    assert await client.app[INSIGHTS].flush(client.app[DB_POOL]) == 0
    assert await total(db) == 0


async def test_junk_around_the_parameters_is_dropped_before_counting(
    settings: Settings, load: Any, db: Any
) -> None:
    """A flood of unique long query strings cannot fill memory between two writes: the long way
    keeps only the four parameters the check reads."""
    await load(WORLD)
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    counter = InsightsCounter(Defaults("linux", "x64"))
    for i in range(50):
        junk = f"&pad{i}=" + "x" * 400
        counter.answered(repo_id, f"version=1.0.0{junk}&platform=darwin&arch=arm64", b"")
    assert len(counter._checks) == 1  # one key for the fifty
    assert await counter.flush(db) == 50
    assert await by(db, "check", "platform") == {"darwin": 50}
    assert await by(db, "check", "running") == {"1.0.0": 50}
