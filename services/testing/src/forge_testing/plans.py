"""What a statement's PostgreSQL plan reads, so a test can show that a batch statement's work
stays bounded by its batch however large a table grows.

`explained` plans the statement afresh; `explained_as_prepared` shows the plan a connection would
use for a statement it has already prepared (asyncpg prepares each statement once per connection,
and PostgreSQL may keep one generic plan for it, made when the tables were small). Both run the
statement (EXPLAIN ANALYZE) inside a transaction they roll back.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg


async def explained(conn: asyncpg.Connection[Any], statement: str, *args: Any) -> dict[str, Any]:
    """The executed plan of `statement` with `args`, planned now."""
    return await _explain(conn, "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, args, "")


async def explained_as_prepared(
    conn: asyncpg.Connection[Any], statement: str, *args: Any, setup: str = ""
) -> dict[str, Any]:
    """The executed plan of `statement` as `conn` prepared it (it must have run on `conn`):
    EXPLAIN EXECUTE of its prepared statement, with `args` written as literals of its types."""
    prepared = await conn.fetchrow(
        "SELECT name, parameter_types::text[] AS types FROM pg_prepared_statements"
        " WHERE statement = $1",
        statement,
    )
    assert prepared is not None, "the statement was not prepared on this connection"
    types: list[str] = prepared["types"]
    quoted = ", ".join(f"quote_nullable(${n}::{kind}::text)" for n, kind in enumerate(types, 1))
    literals = await conn.fetchrow(f"SELECT {quoted}", *args)
    assert literals is not None
    values = ", ".join(f"{literal}::{kind}" for literal, kind in zip(literals, types, strict=True))
    execute = f'EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "{prepared["name"]}"({values})'
    return await _explain(conn, execute, (), setup)


def rows_read(plan: dict[str, Any], table: str) -> int:
    """Rows the plan's scans of `table` read, kept or filtered out, over all their loops."""
    read = 0
    if plan.get("Relation Name") == table and "Scan" in plan["Node Type"]:
        kept, dropped = plan["Actual Rows"], plan.get("Rows Removed by Filter", 0)
        read += (kept + dropped) * plan["Actual Loops"]
    return read + sum(rows_read(child, table) for child in plan.get("Plans", ()))


async def _explain(
    conn: asyncpg.Connection[Any], explain: str, args: tuple[Any, ...], setup: str
) -> dict[str, Any]:
    transaction = conn.transaction()
    await transaction.start()
    try:
        if setup:
            await conn.execute(setup)
        plan = await conn.fetchval(explain, *args)
    finally:
        await transaction.rollback()
    # A connection with forge's codecs decodes the JSON already; a bare one returns text.
    decoded = json.loads(plan) if isinstance(plan, str) else plan
    root: dict[str, Any] = decoded[0]["Plan"]
    return root
