"""The test suite's databases (forge_testing/databases.py): a used one is handed out again only
when it cannot be told from a fresh clone of the template, and never under its old name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from forge_testing.databases import DatabaseFactory, execute, with_database
from forge_testing.plugin import TEMPLATE, run_sync


@pytest.fixture
def factory(pg_server_url: str, template_url: str) -> Iterator[DatabaseFactory]:
    made = DatabaseFactory(pg_server_url, TEMPLATE, template_url)
    yield made
    made.close()


def sql(url: str, statement: str) -> Any:
    async def run() -> Any:
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetchval(statement)
        finally:
            await conn.close()

    return run_sync(run())


def used_then_next(factory: DatabaseFactory, server: str, change: str) -> tuple[str, str]:
    """A database a test changed with `change` and released, then the database after the one
    handed out meanwhile (the factory keeps one ready ahead)."""
    used = factory.acquire()
    run_sync(execute(with_database(server, used), change))
    factory.release(used)
    factory.acquire()  # the one cloned ahead while `used` was in use
    return used, factory.acquire()


def test_a_used_database_comes_back_empty_under_a_new_name_with_its_sequences_restarted(
    factory: DatabaseFactory, pg_server_url: str
) -> None:
    used, after = used_then_next(
        factory,
        pg_server_url,
        "INSERT INTO core.accounts (kind, name) VALUES ('user', 'leftover')",
    )
    assert factory.reused == 1 and after != used
    url = with_database(pg_server_url, after)
    assert sql(url, "SELECT count(*) FROM core.accounts") == 0
    # the identity starts again where a clone's does
    assert sql(url, "INSERT INTO core.accounts (kind, name) VALUES ('user', 'a') RETURNING id") == 1
    databases = sql(pg_server_url, f"SELECT count(*) FROM pg_database WHERE datname = '{used}'")
    assert databases == 0  # nothing left behind reaches it by its old name


def test_rows_that_reference_each_other_are_emptied_whatever_the_order(
    factory: DatabaseFactory, pg_server_url: str
) -> None:
    """The rows are deleted table by table with the foreign keys off: a repository's account can
    go first, and the cascade it would start finds nothing that is not emptied anyway."""
    _, after = used_then_next(
        factory,
        pg_server_url,
        "WITH a AS (INSERT INTO core.accounts (kind, name) VALUES ('org', 'o') RETURNING id) "
        "INSERT INTO core.repositories (owner_id, name) SELECT id, 'r' FROM a",
    )
    assert factory.reused == 1
    url = with_database(pg_server_url, after)
    assert sql(url, "SELECT count(*) FROM core.accounts") == 0
    assert sql(url, "SELECT count(*) FROM core.repositories") == 0
    owner = sql(url, "INSERT INTO core.accounts (kind, name) VALUES ('org', 'o') RETURNING id")
    made = f"INSERT INTO core.repositories (owner_id, name) VALUES ({owner}, 'r') RETURNING id"
    assert (owner, sql(url, made)) == (1, 1)
    # the foreign keys hold again in the next test's database
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        sql(url, "INSERT INTO core.repositories (owner_id, name) VALUES (99, 'x')")


@pytest.mark.parametrize(
    "change",
    [
        "CREATE TABLE public.left_behind (id int)",
        "ALTER TABLE core.accounts ADD COLUMN extra int",
        "DELETE FROM forge_migrations WHERE version = (SELECT max(version) FROM forge_migrations)",
        "CREATE INDEX accounts_extra ON core.accounts (name, kind)",
    ],
)
def test_a_database_whose_schema_or_migration_record_changed_is_dropped_not_reused(
    factory: DatabaseFactory, pg_server_url: str, change: str
) -> None:
    used, after = used_then_next(factory, pg_server_url, change)
    assert factory.reused == 0 and factory.cloned == 3
    listed = sql(pg_server_url, "SELECT string_agg(datname, ',') FROM pg_database")
    assert used not in listed
    assert sql(with_database(pg_server_url, after), "SELECT count(*) FROM core.accounts") == 0


@pytest.mark.parametrize(
    "change",
    [
        "INSERT INTO core.accounts (kind, name) VALUES ('user', 'seen'); ANALYZE core.accounts",
        "INSERT INTO core.accounts (kind, name)"
        " SELECT 'user', 'u' || n FROM generate_series(1, 2000) n",
    ],
    ids=["statistics", "ten-pages-or-more"],
)
def test_a_database_the_planner_would_plan_differently_than_a_clone_is_dropped(
    factory: DatabaseFactory, pg_server_url: str, change: str
) -> None:
    """Statistics a test gathered, or pages of rows a DELETE leaves behind past the 10 the
    planner assumes of a table never analyzed, would plan the next test's statements as no
    clone would."""
    _, after = used_then_next(factory, pg_server_url, change)
    assert factory.reused == 0 and factory.cloned == 3
    url = with_database(pg_server_url, after)
    assert sql(url, "SELECT reltuples FROM pg_class WHERE oid = 'core.accounts'::regclass") == -1


def test_the_counters_autovacuum_reads_start_at_zero_in_a_reused_database(
    factory: DatabaseFactory, pg_server_url: str
) -> None:
    """A clone's are zero: a reused database's must not make autovacuum analyze the next test's
    tables for the rows the last test wrote."""
    _, after = used_then_next(
        factory,
        pg_server_url,
        "INSERT INTO core.accounts (kind, name)"
        " SELECT 'user', 'u' || n FROM generate_series(1, 60) n",
    )
    assert factory.reused == 1
    changed = (
        "SELECT n_mod_since_analyze FROM pg_stat_user_tables"
        " WHERE relid = 'core.accounts'::regclass"
    )
    assert sql(with_database(pg_server_url, after), changed) == 0


def test_new_rows_of_a_reused_database_lie_in_the_order_written_as_in_a_clone(
    factory: DatabaseFactory, pg_server_url: str
) -> None:
    """The deleted rows' pages are given back: a table holds no page, as a clone's, so the next
    test's rows are stored one after another (pages freed in the middle of a table would take
    them in any order)."""
    _, after = used_then_next(
        factory,
        pg_server_url,
        "INSERT INTO core.accounts (kind, name)"
        " SELECT 'user', 'u' || n FROM generate_series(1, 500) n;"
        "; DELETE FROM core.accounts WHERE id % 2 = 0",
    )
    assert factory.reused == 1
    url = with_database(pg_server_url, after)
    assert sql(url, "SELECT pg_relation_size('core.accounts')") == 0
    assert sql(url, "SELECT reltuples FROM pg_class WHERE oid = 'core.accounts'::regclass") == -1
    run_sync(
        execute(
            url,
            "INSERT INTO core.accounts (kind, name) SELECT 'user', 'n' || n"
            " FROM generate_series(1, 50) n",
        )
    )
    in_place = "SELECT array_agg(id ORDER BY ctid) = array_agg(id ORDER BY id) FROM core.accounts"
    assert sql(url, in_place) is True
