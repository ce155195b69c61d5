"""docs/orgs.md "Overview cache": one overview per viewer class, invalidated by the database's
notifications. Privacy: every class gets, from the cache, exactly what the uncached computation
gives it, whatever class filled the cache first; a change made behind the service's back (another
replica, psql) shows within a second; a writer reads their own write at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from forge_common.keys import NOTIFICATIONS
from forge_orgs.options import Options
from forge_orgs.overview.prepared import OVERVIEW_CACHE
from forge_orgs.service import create_app
from forge_testing.waiting import eventually

from .conftest import TOKENS, VIEWERS
from .openapi_check import Api

ORGS = ["pub", "lim", "priv"]
UNCACHED = Options(overview_cache_entries=0)


async def cached_api(aiohttp_client: Any, settings: Any) -> Api:
    client = await aiohttp_client(create_app(settings))
    await asyncio.wait_for(client.server.app[NOTIFICATIONS].listening.wait(), 10)
    return Api(client, TOKENS)


async def answers(api: Api, order: list[str]) -> dict[tuple[str, str], tuple[int, bytes]]:
    found = {}
    for org in ORGS:
        for viewer in order:
            as_ = None if viewer == "anonymous" else viewer
            reply = await api.get(f"/orgs/{org}/overview", as_=as_)
            found[org, viewer] = (reply.status, reply.raw)
    return found


@pytest.mark.parametrize("first", VIEWERS)
async def test_each_class_gets_its_own_answer_whoever_filled_the_cache(
    aiohttp_client, settings, ids, first
):
    expected = await answers(
        Api(await aiohttp_client(create_app(settings, UNCACHED)), TOKENS), VIEWERS
    )
    api = await cached_api(aiohttp_client, settings)
    order = [first, *(v for v in VIEWERS if v != first)]
    assert await answers(api, order) == expected  # filling the cache, `first` first
    assert await answers(api, list(reversed(order))) == expected  # from the cache
    cache = api.client.server.app[OVERVIEW_CACHE]
    assert cache.hits >= len(ORGS) * len(VIEWERS)
    # a private organization is 404 to those outside it, from the cache too, byte for byte
    # (the request id aside)
    assert expected["priv", "stranger"][0] == expected["priv", "anonymous"][0] == 404


async def test_a_change_behind_the_services_back_shows_within_a_second(
    aiohttp_client, settings, ids, db
):
    api = await cached_api(aiohttp_client, settings)
    before = (await api.get("/orgs/pub/overview")).json
    assert "open" in {p["repo"]["name"] for p in before["pinned_repos"]}
    assert (await api.get("/orgs/pub/overview")).json == before  # cached
    await db.execute(
        "UPDATE core.repositories SET private = true WHERE name = 'open' AND owner_id = "
        "(SELECT id FROM core.accounts WHERE name = 'pub')"
    )

    async def hidden() -> bool:
        body = (await api.get("/orgs/pub/overview")).json
        return "open" not in {p["repo"]["name"] for p in body["pinned_repos"]}

    await eventually(hidden, within=1.0, what="the repository hidden from anonymous callers")


async def test_a_writer_reads_their_own_write_at_once(aiohttp_client, settings, ids):
    api = await cached_api(aiohttp_client, settings)
    before = (await api.get("/orgs/pub/overview", as_="owner")).json
    pinned = [p["repo"]["name"] for p in before["pinned_repos"]]
    assert "spare" not in pinned
    assert (
        await api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "spare"})
    ).status == 201
    after = (await api.get("/orgs/pub/overview", as_="owner")).json
    assert "spare" in [p["repo"]["name"] for p in after["pinned_repos"]]


async def test_a_grant_of_ones_own_is_part_of_the_class(aiohttp_client, settings, ids, db):
    """Grants change no cached row (no notification): the class read at each request has them."""
    api = await cached_api(aiohttp_client, settings)

    async def pinned(as_: str | None) -> set[str]:
        body = (await api.get("/orgs/pub/overview", as_=as_)).json
        return {p["repo"]["name"] for p in body["pinned_repos"]}

    assert "secret" not in await pinned("stranger")
    assert "secret" not in await pinned("stranger")  # cached for strangers without grants
    grant = (
        "INSERT INTO core.collaborators (repo_id, user_id, permission) "
        "SELECT r.id, u.id, 'read' FROM core.repositories r, core.accounts u "
        "WHERE r.name = 'secret' AND r.owner_id = (SELECT id FROM core.accounts WHERE name = "
        "'pub') AND u.name = 'stan'"
    )
    await db.execute(grant)
    assert "secret" in await pinned("stranger")  # at once: another class
    assert "secret" not in await pinned(None)
    await db.execute("DELETE FROM core.collaborators")
    assert "secret" not in await pinned("stranger")
