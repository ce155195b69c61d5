"""docs/releases.md "Caching": an anonymous caller's page of a public release list is kept for at
most a second. A release written behind the service (another replica, psql) shows through the
notification; a download counted here shows at once; a count changed elsewhere within a second;
a caller with a token never gets the anonymous page."""

from __future__ import annotations

import asyncio
from typing import Any

from forge_releases.keys import RELEASE_CACHE
from forge_releases.read import queries
from forge_testing.waiting import eventually

from .support import auth, one_repo, rel

LIST = "/api/v2/repos/owner/app/releases"


async def listed(client: Any, path: str = LIST, caller: str = "anonymous") -> list[Any]:
    resp = await client.get(path, headers=auth(caller))
    assert resp.status == 200
    body: list[Any] = await resp.json()
    return body


def counts(page: list[Any]) -> list[int]:
    return [a["download_count"] for release in page for a in release["assets"]]


async def test_a_page_is_kept_and_a_change_behind_the_service_shows(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.zip")]))
    client = await make_client(wait_cache=True)
    first = await listed(client)
    assert client.app[RELEASE_CACHE].sizes()["lists"] == 1
    assert await listed(client) == first
    await db.execute(
        "INSERT INTO releases.releases (repo_id, tag, created_at) "
        "SELECT id, 'v2.0.0', now() FROM core.repositories WHERE name = 'app'"
    )

    async def shown() -> bool:
        return [r["tag_name"] for r in await listed(client)] == ["v2.0.0", "v1.0.0"]

    await eventually(shown, within=1.0, what="the new release listed")


async def test_download_counts_are_at_most_a_second_old(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.zip")]))
    client = await make_client(wait_cache=True)
    assert counts(await listed(client)) == [0]
    # counted here: the caller sees their own download at once
    download = await client.get("/owner/app/releases/download/v1.0.0/App.zip")
    assert download.status == 200
    await download.read()
    assert counts(await listed(client)) == [1]
    # counted by another replica (no notification for a count): within a second
    await db.execute("UPDATE releases.assets SET download_count = download_count + 5")
    await asyncio.sleep(1.1)
    assert counts(await listed(client)) == [6]


async def test_a_caller_with_a_token_never_gets_the_anonymous_page(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.zip"), rel("v2.0.0", 2, draft=True)]))
    client = await make_client(wait_cache=True)
    path = f"{LIST}?drafts=true"
    assert [r["tag_name"] for r in await listed(client, path)] == ["v1.0.0"]
    assert [r["tag_name"] for r in await listed(client, path, "owner")] == ["v2.0.0", "v1.0.0"]
    assert [r["tag_name"] for r in await listed(client, path)] == ["v1.0.0"]


async def test_callers_finding_no_page_kept_share_one_computation(
    make_client: Any, load: Any, db: Any, monkeypatch: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.zip")]))
    client = await make_client(wait_cache=True)
    await listed(client)
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'app'")
    client.app[RELEASE_CACHE].downloaded(repo_id)  # the page dropped; the repository still known

    # the real count, held until every caller has arrived, and counted
    counted = []
    arrived = asyncio.Event()
    real_count = queries.count_releases

    async def held_count(*args: Any, **kwargs: Any) -> int:
        counted.append(1)
        await arrived.wait()
        return await real_count(*args, **kwargs)

    monkeypatch.setattr(queries, "count_releases", held_count)
    callers = [asyncio.create_task(listed(client)) for _ in range(8)]
    await eventually(lambda: bool(counted), what="the page being computed")
    await asyncio.sleep(0.3)  # the other callers have arrived too
    arrived.set()
    pages = await asyncio.gather(*callers)
    assert counted == [1]  # one computation (each caller computing its own page gave 8)
    assert all(page == pages[0] for page in pages)
    assert [r["tag_name"] for r in pages[0]] == ["v1.0.0"]
