"""The asyncpg pool: JSON codecs through orjson and a statement cache sized for our hot queries;
the connection types every service's SQL functions take; `connection()` and `transaction()`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import asyncpg
import orjson

if TYPE_CHECKING:
    Conn: TypeAlias = asyncpg.Connection[Any]
    # What a read-only query function accepts: one connection, or the pool (one statement).
    Queryable: TypeAlias = asyncpg.Connection[Any] | asyncpg.Pool
else:  # the classes are not subscriptable at run time
    Conn = asyncpg.Connection
    Queryable = asyncpg.Connection | asyncpg.Pool


@asynccontextmanager
async def connection(pool: asyncpg.Pool) -> AsyncIterator[Conn]:
    """One pooled connection, typed as a plain connection.

    The pool hands out proxies that behave as `asyncpg.Connection` (and pass `isinstance` for it)
    but are typed apart in the stubs; this is the one place that says so.
    """
    async with pool.acquire() as proxy:
        yield cast(Conn, proxy)


@asynccontextmanager
async def transaction(pool: asyncpg.Pool) -> AsyncIterator[Conn]:
    """One pooled connection inside a transaction: committed on exit, rolled back on error."""
    async with connection(pool) as conn, conn.transaction():
        yield conn


async def _init_connection(conn: asyncpg.Connection[Any]) -> None:
    for type_name in ("json", "jsonb"):
        await conn.set_type_codec(
            type_name,
            encoder=lambda value: orjson.dumps(value).decode(),
            decoder=orjson.loads,
            schema="pg_catalog",
        )


async def _keep_session(conn: asyncpg.Connection[Any]) -> None:
    """Pool reset hook: nothing to do. asyncpg rolls back an open transaction before calling it,
    and pooled connections carry no session state of ours (LISTEN and advisory locks use
    connections of their own), so the default RESET ALL round trip on every release is waste."""


def _not_a_reconnect_attempt(record: logging.LogRecord) -> bool:
    """asyncpg's pool logs a warning with a traceback each time it fails to reopen its minimum
    of connections: one per second while PostgreSQL is down. forge_common.outage logs the outage
    once instead (docs/architecture.md "Dependency outages")."""
    return not str(record.msg).startswith("Failed to restore the pool connection floor")


logging.getLogger("asyncpg.pool").addFilter(_not_a_reconnect_attempt)


# The most connections one process's request pool opens: docs/deploy.md "PostgreSQL connections"
# sums these over the recipe's replicas (tests-e2e/test_connection_budget.py).
POOL_MAX_SIZE = 10


async def create_pool(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = POOL_MAX_SIZE,
    server_settings: dict[str, str] | None = None,
) -> asyncpg.Pool:
    """`server_settings`: PostgreSQL settings of every connection of the pool (the event delivery
    worker's pool commits without waiting for the WAL flush: docs/events.md "Under overload").

    They are set by a statement when a connection opens, not sent as startup parameters: PgBouncer
    refuses a connection whose startup packet carries a setting it does not know (or, told to
    ignore them, drops the setting), and a session-mode pooler is supported (docs/deploy.md)."""
    names, values = list(server_settings or {}), list((server_settings or {}).values())

    async def init(conn: asyncpg.Connection[Any]) -> None:
        await _init_connection(conn)
        if names:  # all in one round trip
            await conn.execute(
                "SELECT set_config(n, v, false) FROM unnest($1::text[], $2::text[]) AS s(n, v)",
                names,
                values,
            )

    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=init,
        reset=_keep_session,
        statement_cache_size=1024,
        command_timeout=30,
    )
    assert pool is not None
    return pool


async def connect(dsn: str) -> asyncpg.Connection[Any]:
    """One connection with the same codecs as the pool (CLI commands, tests)."""
    conn: asyncpg.Connection[Any] = await asyncpg.connect(dsn, statement_cache_size=1024)
    await _init_connection(conn)
    return conn
