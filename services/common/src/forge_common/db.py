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


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
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
