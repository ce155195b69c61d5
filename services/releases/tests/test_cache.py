"""The in-memory hot path of the update check: a cached check runs no query, and a change made
behind the cache (plain SQL, another replica) is seen by the next check, through LISTEN/NOTIFY on
the application's one LISTEN connection (forge_common.notifications). When that connection fails
or goes deaf, answers stay correct (uncached) and it reconnects."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from forge_common.keys import DB_POOL, NOTIFICATIONS
from forge_releases.keys import RELEASE_CACHE
from forge_releases.read.cache import CHANNEL, ReleaseCache
from forge_testing.waiting import eventually

from .support import FAST, auth, one_repo, rel

CHECK = "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"


async def offered(client: Any, path: str = CHECK, caller: str = "anonymous") -> str | None:
    resp = await client.get(path, headers=auth(caller))
    assert resp.status in (200, 204)
    return (await resp.json())["name"] if resp.status == 200 else None


async def add_release(db: Any, tag: str, asset: str = "App-arm64.zip", repo: str = "app") -> None:
    """A release written straight into the database, as another replica (or psql) would."""
    async with db.transaction():
        release_id = await db.fetchval(
            """INSERT INTO releases.releases (repo_id, tag, created_at)
               SELECT r.id, $1, now() FROM core.repositories r WHERE r.name = $2
               RETURNING id""",
            tag,
            repo,
        )
        await db.execute(
            """INSERT INTO releases.assets (release_id, name, size, sha1, sha256, sha512)
               VALUES ($1, $2, 1, '', repeat('0', 64), '')""",
            release_id,
            asset,
        )


@contextlib.asynccontextmanager
async def pool_exhausted(client: Any) -> AsyncIterator[None]:
    """Every pooled connection taken: a request that needs a query would hang."""
    pool = client.app[DB_POOL]
    taken = [await pool.acquire() for _ in range(pool.get_max_size())]
    try:
        yield
    finally:
        for conn in taken:
            await pool.release(conn)


async def test_cached_update_check_runs_no_query(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip"), rel("v1.1.0", 2, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.1.0"  # fills the cache
    async with pool_exhausted(client), asyncio.timeout(3):
        assert await offered(client) == "v1.1.0"
        # another version of the same repository: computed from cached candidates, no query
        assert await offered(client, CHECK.replace("1.0.0", "1.1.0")) is None
        # the latest-release download address resolves from the same cache
        resp = await client.head("/owner/app/releases/latest/download/App-arm64.zip")
        assert resp.status == 200


async def test_release_added_behind_the_cache_is_seen(make_client: Any, load: Any, db: Any) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.1.0"
    await add_release(db, "v1.2.0")
    await eventually(lambda: offered_is(client, "v1.2.0"))


async def offered_is(client: Any, tag: str | None, path: str = CHECK) -> bool:
    return await offered(client, path) == tag


async def test_release_changes_behind_the_cache_are_seen(
    make_client: Any, load: Any, db: Any
) -> None:
    """Deleting, re-flagging and renaming assets all reach the cache."""
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip"), rel("v1.2.0", 2, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.2.0"
    await db.execute("UPDATE releases.releases SET draft = true WHERE tag = 'v1.2.0'")
    await eventually(lambda: offered_is(client, "v1.1.0"))
    await db.execute("UPDATE releases.assets SET name = 'other.txt'")
    await eventually(lambda: offered_is(client, None))
    await db.execute("UPDATE releases.assets SET name = 'App-arm64.zip'")
    await db.execute("UPDATE releases.releases SET draft = false")
    await eventually(lambda: offered_is(client, "v1.2.0"))
    await db.execute("DELETE FROM releases.releases WHERE tag = 'v1.2.0'")
    await eventually(lambda: offered_is(client, "v1.1.0"))


async def test_download_counts_do_not_invalidate(make_client: Any, load: Any, db: Any) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    await offered(client)
    cache = client.app[RELEASE_CACHE]
    token = cache.token()
    await db.execute("UPDATE releases.assets SET download_count = download_count + 5")
    await db.execute("SELECT pg_notify('forge_releases', 'odd')")  # unknown payload: clears
    await eventually(lambda: cache.token() != token)
    token = cache.token()
    await offered(client)
    await db.execute("UPDATE releases.assets SET download_count = download_count + 5")
    await asyncio.sleep(0.2)
    assert cache.token() == token  # no notification for a count


async def test_repository_made_private_behind_the_cache(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.1.0"
    await db.execute("UPDATE core.repositories SET private = true")

    async def refused() -> bool:
        return (await client.get(CHECK)).status == 401

    await eventually(refused)
    assert await offered(client, caller="owner") == "v1.1.0"


async def test_repository_renamed_behind_the_cache(make_client: Any, load: Any, db: Any) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.1.0"
    await db.execute("UPDATE core.repositories SET name = 'renamed'")

    async def moved() -> bool:
        return (await client.get(CHECK)).status == 404

    await eventually(moved)
    resp = await client.get(CHECK.replace("/app/", "/renamed/"))
    assert (await resp.json())["url"].startswith("http://forge.test/owner/renamed/")


async def test_two_replicas_on_one_database_both_see_a_change(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    first = await make_client(wait_cache=True)
    second = await make_client(wait_cache=True)
    assert await offered(first) == "v1.1.0"
    assert await offered(second) == "v1.1.0"
    await add_release(db, "v1.3.0")
    await eventually(lambda: offered_is(first, "v1.3.0"))
    await eventually(lambda: offered_is(second, "v1.3.0"))


async def test_lost_listen_connection_degrades_to_uncached_then_reconnects(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    slow_retry = replace(FAST, backoff_initial=1.5, backoff_max=1.5)
    client = await make_client(wait_cache=True, notifications=slow_retry)
    notifications = client.app[NOTIFICATIONS]
    cache = client.app[RELEASE_CACHE]
    assert await offered(client) == "v1.1.0"
    pid = notifications.server_pid
    assert pid is not None
    await db.execute("SELECT pg_terminate_backend($1)", pid)
    await eventually(lambda: not notifications.listening.is_set())
    assert not cache.enabled
    # while nobody listens, a change is still seen at once: nothing is served from the cache
    await add_release(db, "v1.2.0")
    assert await offered(client) == "v1.2.0"
    # it comes back, with an empty cache, and notifications work again
    await asyncio.wait_for(notifications.listening.wait(), 10)
    assert cache.enabled
    assert notifications.server_pid != pid
    assert await offered(client) == "v1.2.0"
    await add_release(db, "v1.4.0")
    await eventually(lambda: offered_is(client, "v1.4.0"))


async def test_listener_that_cannot_connect_keeps_answers_correct(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    """A wrong LISTEN address (say, a proxy that drops LISTEN): uncached but correct."""
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    notifications = client.app[NOTIFICATIONS]
    notifications.dsn = settings.database_url.replace("forge_test", "no_such_db")
    await db.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE pid <> pg_backend_pid() AND datname = current_database()"
    )
    await eventually(lambda: not notifications.listening.is_set())
    await asyncio.sleep(0.3)  # a few failed attempts
    assert not client.app[RELEASE_CACHE].enabled
    assert await offered(client) == "v1.1.0"
    await add_release(db, "v1.2.0")
    assert await offered(client) == "v1.2.0"


def test_cache_ignores_a_load_that_raced_with_an_invalidation() -> None:
    from forge_releases.read.cache import RepoReleases

    cache = ReleaseCache()
    cache.reset(enabled=True)
    token = cache.token()
    cache.invalidate_repo(7)  # a change lands while the load's query runs
    cache.put_repo(7, RepoReleases((), ()), token)
    assert cache.get_repo(7) is None
    token = cache.token()
    cache.put_repo(7, RepoReleases((), ()), token)
    assert cache.get_repo(7) is not None
    cache.reset(enabled=False)
    cache.put_repo(7, RepoReleases((), ()), cache.token())
    assert cache.get_repo(7) is None


async def test_signed_in_access_is_checked_on_every_request(
    make_client: Any, load: Any, db: Any
) -> None:
    """The cache holds no per-viewer access: a removed collaborator is refused at once."""
    await load(
        one_repo(
            [rel("v1.1.0", 1, "App-arm64.zip")],
            private=True,
            collaborators=[{"user": "stranger", "permission": "read"}],
        )
    )
    client = await make_client(wait_cache=True)
    assert await offered(client, caller="stranger") == "v1.1.0"
    await db.execute("DELETE FROM core.collaborators")
    resp = await client.get(CHECK, headers=auth("stranger"))
    assert resp.status == 404
    assert resp.headers.get("Cache-Control") is None or "public" not in resp.headers.get(
        "Cache-Control", ""
    )


async def test_private_repository_with_public_releases_is_cached_too(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")], private=True, public_releases=True))
    client = await make_client(wait_cache=True)
    assert await offered(client) == "v1.1.0"
    missing = CHECK.replace("/app/", "/nothing/")
    assert (await client.get(missing)).status == 404
    async with pool_exhausted(client), asyncio.timeout(3):
        resp = await client.get(CHECK)
        assert resp.status == 200
        assert resp.headers["Cache-Control"].startswith("public")
        # a repository known not to exist is refused without a query as well
        assert (await client.get(missing)).status == 404


async def test_deaf_listen_connection_is_detected_and_replaced(
    make_client: Any, load: Any, db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that is up but no longer delivers notifications (a proxy that swallows
    them) fails its own probe: the cache goes off and a new connection is made. The deaf
    connection is played as services/common/tests/test_notifications.py does (its probe goes
    nowhere), and it also stops hearing `forge_releases`."""
    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True, notifications=replace(FAST, probe_timeout=0.5))
    notifications = client.app[NOTIFICATIONS]
    cache = client.app[RELEASE_CACHE]
    assert await offered(client) == "v1.1.0"
    deaf = notifications._conn
    deaf_pid = notifications.server_pid
    assert deaf is not None
    send_probe = notifications._send_probe

    async def swallowed(conn: Any, payload: str) -> None:
        if conn is not deaf:
            await send_probe(conn, payload)

    monkeypatch.setattr(notifications, "_send_probe", swallowed)
    await deaf.remove_listener(CHANNEL, notifications._dispatch)
    await add_release(db, "v1.2.0")  # its notification is not heard
    await eventually(lambda: offered_is(client, "v1.2.0"))
    await asyncio.wait_for(notifications.listening.wait(), 10)
    assert notifications.server_pid not in (None, deaf_pid)
    assert deaf.is_closed()
    assert cache.enabled  # the new connection proved itself: the cache is on again


def test_cache_memory_is_bounded() -> None:
    from forge_releases.read.cache import NO_UPDATE, CacheLimits, RepoReleases

    cache = ReleaseCache(CacheLimits(names=3, repos=2, answers_per_repo=4, answers=6))
    cache.reset(enabled=True)
    for i in range(5):
        cache.put_name(("o", f"r{i}"), None, cache.token())
        cache.put_repo(i, RepoReleases((), ()), cache.token())
    assert len(cache._names) <= 3 and len(cache._repos) <= 2
    cache.reset(enabled=True)
    for i in (3, 4):
        cache.put_repo(i, RepoReleases((), ()), cache.token())
    first, second = (cache.get_repo(i) for i in (3, 4))
    assert first is not None and second is not None
    for i in range(5):
        cache.remember_answer(first, f"version={i}", NO_UPDATE)
    assert len(first.answers) <= 4
    for i in range(3):
        cache.remember_answer(second, f"version={i}", NO_UPDATE)
    assert len(first.answers) + len(second.answers) <= 6


async def test_the_cache_rides_on_the_applications_one_listen_connection(
    make_client: Any, load: Any, db: Any
) -> None:
    """No LISTEN connection of its own: the one of forge_common.notifications, subscribed to
    `forge_releases`; leaving the application unsubscribes and turns the cache off."""
    from forge_common.notifications import APPLICATION_NAME

    await load(one_repo([rel("v1.1.0", 1, "App-arm64.zip")]))
    client = await make_client(wait_cache=True)
    sessions = await db.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = $1",
        APPLICATION_NAME,
    )
    assert sessions == 1
    assert CHANNEL in client.app[NOTIFICATIONS]._subscriptions
    cache = client.app[RELEASE_CACHE]
    assert cache.enabled
    await client.close()
    assert not cache.enabled
