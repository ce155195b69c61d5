"""The primitives every service shares: conditional GET, path ids, name patterns, transactions,
`eventually()` and the shared-world databases."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from forge_common.conditional import none_match, not_modified, quoted
from forge_common.db import create_pool, transaction
from forge_common.ids import positive_int64
from forge_common.names import is_account_name, is_repo_name
from forge_testing.plugin import WorldDatabases, run_sync
from forge_testing.waiting import eventually

ETAG = quoted("abc123")


def _request(if_none_match: str | None) -> web.Request:
    headers = {} if if_none_match is None else {"If-None-Match": if_none_match}
    return make_mocked_request("GET", "/", headers=headers)


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        (None, False),
        ("", False),
        ('"abc123"', True),
        ('W/"abc123"', True),  # weak comparison: a weak validator of the same bytes matches
        ('"other", "abc123"', True),
        ('"other"', False),
        ("*", True),
        ("abc123", False),  # unquoted is not an entity tag
        ('"abc1234"', False),
    ],
)
def test_if_none_match_follows_rfc_9110(header: str | None, matches: bool) -> None:
    assert none_match(_request(header), ETAG) is matches


def test_not_modified_keeps_the_caching_headers_and_has_no_body() -> None:
    response = not_modified(ETAG, {"Cache-Control": "private", "Vary": "Authorization"})
    assert response.status == 304 and response.body is None
    assert response.headers["ETag"] == ETAG and response.headers["Vary"] == "Authorization"


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1", 1),
        ("+7", 7),  # Go's ParseInt takes a sign, and the contract says "parses as an int64"
        ("9223372036854775807", 2**63 - 1),
        ("0", None),
        ("-1", None),
        ("9223372036854775808", None),
        ("1" * 5000, None),  # no ValueError from Python's integer-string limit
        ("1_0", None),
        (" 1", None),
        ("١", None),  # Arabic-Indic digit one: int() would take it
        ("", None),
        ("+", None),
        ("0x10", None),
    ],
)
def test_positive_int64_is_one_rule_for_every_path_id(raw: str, value: int | None) -> None:
    assert positive_int64(raw) == value


@pytest.mark.parametrize(
    ("name", "account", "repo"),
    [
        ("acme", True, True),
        ("a" * 39, True, True),
        ("a" * 40, False, True),
        ("-acme", False, True),
        (".dotfiles", False, True),
        ("app\n", False, False),  # `$` would have let a trailing newline through
        ("a/b", False, False),
        ("", False, False),
    ],
)
def test_name_patterns(name: str, account: bool, repo: bool) -> None:
    assert is_account_name(name) is account
    assert is_repo_name(name) is repo


async def test_transaction_commits_on_exit_and_rolls_back_on_error(database_url: str) -> None:
    pool = await create_pool(database_url)
    try:
        async with transaction(pool) as conn:
            await conn.execute("CREATE TABLE public.t (n int)")
            await conn.execute("INSERT INTO public.t VALUES (1)")
        with pytest.raises(RuntimeError):
            async with transaction(pool) as conn:
                await conn.execute("INSERT INTO public.t VALUES (2)")
                raise RuntimeError("abandon")
        assert await pool.fetchval("SELECT array_agg(n) FROM public.t") == [1]
    finally:
        await pool.close()


async def test_eventually_waits_for_sync_and_async_checks_and_names_what_timed_out() -> None:
    calls = {"n": 0}

    def third_time() -> bool:
        calls["n"] += 1
        return calls["n"] >= 3

    async def is_true() -> bool:
        return True

    await eventually(third_time, within=1.0)
    await eventually(is_true, within=1.0)
    with pytest.raises(AssertionError, match="the moon"):
        await eventually(lambda: False, within=0.05, what="the moon")


def test_shared_world_databases_hold_their_world_until_dropped(
    world_databases: WorldDatabases,
) -> None:
    shared = world_databases.create({"users": [{"name": "zoe"}]})
    assert "zoe" in shared.ids.accounts

    async def users() -> Any:
        conn = await asyncpg.connect(shared.settings.database_url)
        try:
            return await conn.fetchval("SELECT array_agg(name) FROM core.accounts")
        finally:
            await conn.close()

    assert run_sync(users()) == ["zoe"]
    world_databases.drop(shared)
    with pytest.raises(asyncpg.InvalidCatalogNameError):
        run_sync(users())


async def test_pool_settings_are_set_once_connected_not_sent_at_startup(database_url: str) -> None:
    """A session-mode pooler is supported, and PgBouncer refuses a startup packet carrying a
    setting it does not know (or drops it): a pool's settings are set by a statement once each
    connection is open ("session"), not sent at startup ("client"), and outlive a rollback."""
    wanted = {"plan_cache_mode": "force_custom_plan", "synchronous_commit": "off"}
    pool = await create_pool(database_url, max_size=1, server_settings=wanted)
    try:
        with pytest.raises(RuntimeError):
            async with transaction(pool):
                raise RuntimeError("abandon")
        rows = await pool.fetch(
            "SELECT name, setting, source FROM pg_settings WHERE name = ANY($1::text[])",
            list(wanted),
        )
    finally:
        await pool.close()
    assert {r["name"]: (r["setting"], r["source"]) for r in rows} == {
        name: (value, "session") for name, value in wanted.items()
    }
