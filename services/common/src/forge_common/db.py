"""The asyncpg pool: JSON codecs through orjson and a statement cache sized for our hot queries."""

from __future__ import annotations

from typing import Any

import asyncpg
import orjson

Pool = asyncpg.Pool  # re-exported so services type against one name


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


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
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
