"""Cost: the overview runs a fixed number of queries whatever the counts — the same for
a small organization and for one with 100 pins, 10,000 members (5,000 public) and 1,000
repositories. Queries are counted with asyncpg's query logger on every pooled connection."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from forge_common.keys import DB_POOL, NOTIFICATIONS
from forge_orgs.options import Options
from forge_orgs.service import create_app

from .conftest import TOKENS
from .openapi_check import Api

BIG_ORG_SQL = (Path(__file__).parent / "big_org.sql").read_text()


POOL_RESET = "SELECT pg_advisory_unlock_all()"


class QueryCounter:
    """Statements run by the application; the pool's own reset on release is counted apart."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.resets = 0

    def __call__(self, record) -> None:
        if record.query.startswith(POOL_RESET):
            self.resets += 1
        else:
            self.queries.append(record.query)


UNCACHED = Options(overview_cache_entries=0)


async def counting_client(
    aiohttp_client, settings, options: Options = UNCACHED
) -> tuple[Api, QueryCounter]:
    """The overview cache is off unless `options` turn it on: what is counted is the work of
    computing an overview."""
    client = await aiohttp_client(create_app(settings, options))
    pool = client.server.app[DB_POOL]
    counter = QueryCounter()
    # take every connection the pool may hand out, so each one carries the logger
    held = [await pool.acquire() for _ in range(pool.get_max_size())]
    for conn in held:
        conn.add_query_logger(counter)
    await asyncio.gather(*(pool.release(conn) for conn in held))
    api = Api(client, TOKENS)
    await api.document()  # fetched once by the checking client; not part of what we count
    counter.queries.clear()
    counter.resets = 0
    return api, counter


@pytest.fixture
async def big(db, ids):
    await db.execute(BIG_ORG_SQL)


async def count_overview(api: Api, counter: QueryCounter, org: str, token: str | None):
    headers = {"Authorization": f"token {token}"} if token else {}
    # asyncpg introspects a type the first time a connection meets it: warm up, then count
    await api.get(f"/orgs/{org}/overview", headers=headers)
    counter.queries.clear()
    counter.resets = 0
    reply = await api.get(f"/orgs/{org}/overview", headers=headers)
    assert reply.status == 200
    return reply.json, list(counter.queries), counter.resets


# viewer → (token in the small world, token in the big organization, queries expected):
# the token (when signed in), one query for the whole overview, and one bulk repository access
# call unless the viewer reads every repository of the organization anyway
VIEWER_CASES = {
    "anonymous": (None, None, 2),
    "stranger": ("stan-token", "big-stranger-token", 3),
    "member": ("mia-token", "big-member-token", 3),
    "owner": ("olive-token", "big-owner-token", 2),
}


@pytest.mark.parametrize("viewer", list(VIEWER_CASES))
async def test_overview_runs_a_fixed_number_of_queries_whatever_the_counts(
    aiohttp_client, settings, big, viewer
):
    small_token, big_token, expected = VIEWER_CASES[viewer]
    api, counter = await counting_client(aiohttp_client, settings)
    _, small_queries, small_resets = await count_overview(api, counter, "pub", small_token)
    body, big_queries, big_resets = await count_overview(api, counter, "big", big_token)
    assert len(big_queries) == len(small_queries) == expected, big_queries
    # the shared pool skips the session reset round trip on release (forge_common.db)
    assert big_resets == small_resets == 0
    assert len(body["public_members"]) == 12 and body["total_members"] == 5000
    # 50 public pins; the member's team reads private repo0002, repo0042 and repo0082
    assert len(body["pinned_repos"]) == {"owner": 100, "member": 53}.get(viewer, 50)


# With the overview cache on (overview.py): a cached class costs no query anonymously, and the
# token plus one small query deciding the class when signed in (the member's class includes the
# three private repositories their team reads).
CACHED_CASES = {
    "anonymous": (None, 0),
    "stranger": ("big-stranger-token", 2),
    "owner": ("big-owner-token", 2),
    "member": ("big-member-token", 2),
}


@pytest.mark.parametrize("viewer", list(CACHED_CASES))
async def test_a_cached_overview_skips_the_overview_query(aiohttp_client, settings, big, viewer):
    token, expected = CACHED_CASES[viewer]
    api, counter = await counting_client(aiohttp_client, settings, Options())
    app = api.client.server.app
    await asyncio.wait_for(app[NOTIFICATIONS].listening.wait(), 10)
    body, queries, _ = await count_overview(api, counter, "big", token)
    assert len(queries) == expected, queries
    assert len(body["pinned_repos"]) == {"owner": 100, "member": 53}.get(viewer, 50)


async def test_big_org_overview_figures(aiohttp_client, settings, big):
    api = Api(await aiohttp_client(create_app(settings)), TOKENS)
    owner = (
        await api.get("/orgs/big/overview", headers={"Authorization": "token big-owner-token"})
    ).json
    assert owner["stats"] == {
        "member_count": 10000,
        "repo_count": 1000,
        "public_repo_count": 500,
        "team_count": 20,
    }
    anonymous = (await api.get("/orgs/big/overview")).json
    assert anonymous["stats"] == {
        "member_count": 5000,
        "repo_count": 500,
        "public_repo_count": 500,
        "team_count": 0,
    }
    assert [m["user"]["login"] for m in anonymous["public_members"]][:2] == [
        "bigu00001",
        "bigu00003",
    ]
