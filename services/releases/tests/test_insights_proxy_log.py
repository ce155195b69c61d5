"""Reading nginx's log of the checks it answered from its micro-cache (insights/proxy_log.py,
docs/insights.md "Behind the micro-cache"): each line counted exactly once, whole lines only,
a rotated file read from its start, two replicas never both counting a line; and every URI
turned into the very key the service keeps its answer under."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from forge_common import cli
from forge_common.keys import DB_POOL
from forge_releases.feeds.registry import kept_key
from forge_releases.insights.beside_nginx import Reader
from forge_releases.insights.proxy_log import ingest, key_of
from forge_releases.keys import RELEASE_CACHE

from .test_insights_counting import WORLD, by, replica, total

HOUR = "2026-03-01T12:17:03+02:00"  # nginx's local time: 10:17 UTC
CHECK = "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"


def lines(*entries: tuple[str, str, int]) -> bytes:
    return b"".join(f"{HOUR} {status} {uri}\n".encode() * n for uri, status, n in entries)


async def test_each_line_is_counted_once(
    settings: Any, aiohttp_client: Any, load: Any, db: Any, tmp_path: Path
) -> None:
    await load(WORLD)
    client = await replica(settings, aiohttp_client)
    app = client.app
    log = tmp_path / "hits.log"
    log.write_bytes(
        lines((CHECK, "200", 5), (CHECK, "304", 2), (CHECK, "404", 3), ("/owner/app", "200", 1))
        + f"{HOUR} 200 {CHECK}".encode()  # nginx is halfway through this line
    )
    assert await ingest(app, log) == 7
    assert await ingest(app, log) == 0  # nothing new
    with log.open("ab") as file:
        file.write(b"\n" + lines(("/owner/app/darwin-arm64/1.0.0", "200", 2)))
    assert await ingest(app, log) == 3
    assert await by(db, "check", "running") == {"1.0.0": 10}
    assert await by(db, "check", "feed") == {"update": 8, "squirrel-mac": 2}
    # the hour is nginx's, converted to UTC
    hours = await db.fetch("SELECT DISTINCT hour FROM releases.insights_hourly")
    assert [h["hour"].isoformat() for h in hours] == ["2026-03-01T10:00:00+00:00"]

    rotated = tmp_path / "hits.log.1"
    log.rename(rotated)
    log.write_bytes(lines((CHECK, "200", 4)))  # a new file: another inode, read from its start
    assert await ingest(app, log) == 4
    assert await total(db) == 14


async def test_two_replicas_never_count_a_line_twice(
    settings: Any, aiohttp_client: Any, load: Any, db: Any, tmp_path: Path
) -> None:
    await load(WORLD)
    a = await replica(settings, aiohttp_client)
    b = await replica(settings, aiohttp_client)
    log = tmp_path / "hits.log"
    log.write_bytes(lines((CHECK, "200", 50)))
    counts = await asyncio.gather(*(ingest(app, log) for app in (a.app, b.app, a.app, b.app)))
    assert sum(counts) == 50
    assert await total(db) == 50


# the update check's queries and the feeds' as their clients send them; every registered feed's
# route is walked by test_feed_registry.py
FEEDS = [
    CHECK,
    "/api/v2/repos/owner/app/releases/update?version=1.1.0&platform=darwin&arch=arm64&x=%20y",
    "/owner/app/darwin-arm64/1.0.0",
    "/owner/app/win32-x64/1.0.0/RELEASES",
    "/api/v2/repos/owner/app/releases/feeds/squirrel/x64/RELEASES?id=a&localVersion=1.0.0",
    "/api/v2/repos/owner/app/releases/feeds/squirrel/x64/RELEASES?channel=beta",
    "/api/v2/repos/owner/app/releases/feeds/electron/latest-mac.yml",
]


async def test_every_uri_names_the_key_its_answer_is_kept_under(
    settings: Any, aiohttp_client: Any, load: Any
) -> None:
    await load(WORLD)
    client = await replica(settings, aiohttp_client)
    for uri in FEEDS:
        resp = await client.get(uri)
        assert resp.status in (200, 204), (uri, await resp.text())
        found = key_of(uri)
        assert found is not None, uri
        owner, repo, key = found
        assert (owner, repo) == ("owner", "app")
        repo_id = await client.app[DB_POOL].fetchval(
            "SELECT id FROM core.repositories WHERE name = 'app'"
        )
        kept = client.app[RELEASE_CACHE].get_repo(repo_id)
        # through a feed's band of required steps, as the reader looks it up
        assert kept is not None and kept_key(kept, key) in kept.answers, (uri, key, kept.answers)
    assert key_of("/api/v2/repos/owner/app/releases") is None  # lists are not counted
    assert key_of("/api/v2/repos/owner/app/releases/latest") is None


async def test_beside_nginx_counted_lines_are_freed_and_a_backlog_is_bounded(
    settings: Any, aiohttp_client: Any, load: Any, db: Any, tmp_path: Path
) -> None:
    """docs/insights.md "In Kubernetes": the reader beside nginx frees what it counted (a hole:
    the size and every position kept), and while it cannot count, gives up the oldest lines past
    its limit; the lines after the cut are counted later, once, the cut one not at all."""
    await load(WORLD)
    app = (await replica(settings, aiohttp_client)).app
    log = tmp_path / "hits.log"
    log.write_bytes(lines((CHECK, "200", 100)))
    reader = Reader(log, f"pod-a:{log}", limit=4096)
    await reader.round(app)
    assert await total(db) == 100
    assert log.stat().st_blocks * 512 <= 4096 < log.stat().st_size
    # a reader started again knows the hole is done with: nothing waits beyond its limit
    assert Reader(log, f"pod-a:{log}", limit=4096).space.bound() == 0

    with log.open("ab") as file:  # nobody counts meanwhile (the database is unreachable)
        file.write(lines((CHECK, "200", 200)))
    size = log.stat().st_size
    assert reader.space.bound() == size - 2048 - len(lines((CHECK, "200", 100)))
    assert reader.space.bound() == 0  # given up once
    # what is left: the 2048 bytes kept and the partial blocks at the holes' ends
    assert log.stat().st_size == size and log.stat().st_blocks * 512 <= 3 * 4096
    await reader.round(app)  # the database is back
    assert await total(db) == 100 + 2048 // len(lines((CHECK, "200", 1)))
    await reader.round(app)
    assert await total(db) == 100 + 2048 // len(lines((CHECK, "200", 1)))


def test_the_reader_beside_nginx_needs_the_log_named(capsys: pytest.CaptureFixture[str]) -> None:
    env = {"DATABASE_URL": "postgresql://x/y"}
    assert cli.main(["insights", "count-proxy-log"], env) == 1
    assert capsys.readouterr().err == (
        "forge: INSIGHTS_PROXY_LOG must name the file nginx writes (INSIGHTS_LOG)\n"
    )
