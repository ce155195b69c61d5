"""The gateway's migrations applied to a database that already holds events, as an upgrade does."""

from __future__ import annotations

from forge_common.db import connect, create_pool
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_gateway.events import queries


async def test_dropping_the_delivery_foreign_keys_keeps_every_row_and_pruning_still_cascades(
    pg_server_url: str, database_url: str
) -> None:
    """Migration 0003 removes the foreign keys of deliveries and attempts from a database with
    data in place: nothing is lost, and pruning an old event still removes its delivery and
    attempt, as the cascades did."""
    name = "forge_gateway_upgrade"
    admin = await connect(pg_server_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = database_url.rsplit("/", 1)[0] + "/" + name
    everything = all_migrations(installed_services())
    before = [m for m in everything if not (m.schema == "gateway" and m.version >= 3)]
    conn = await connect(url)
    try:
        await migrate(conn, before)
        await conn.execute(
            """WITH e AS (
                   INSERT INTO gateway.events (id, type, source, occurred_at, received_at)
                   VALUES (gen_random_uuid(), 'release.published', 'releases', now(),
                           now() - interval '8 days')
                   RETURNING id),
               d AS (
                   INSERT INTO gateway.deliveries (event_id, plugin, status, attempts)
                   SELECT id, 'p', 'delivered', 1 FROM e RETURNING id)
               INSERT INTO gateway.delivery_attempts (delivery_id, attempt, started_at, outcome)
               SELECT id, 1, now(), 'delivered' FROM d"""
        )
        # the upgrade to 0003 (later migrations have their own reasons)
        to_0003 = [m for m in everything if not (m.schema == "gateway" and m.version > 3)]
        applied = await migrate(conn, to_0003)
        assert [(m.schema, m.version) for m in applied] == [("gateway", 3)]
        counts = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM gateway.events) AS events,
                      (SELECT count(*) FROM gateway.deliveries) AS deliveries,
                      (SELECT count(*) FROM gateway.delivery_attempts) AS attempts,
                      (SELECT count(*) FROM pg_constraint
                        WHERE contype = 'f' AND connamespace = 'gateway'::regnamespace) AS keys"""
        )
        assert dict(counts) == {"events": 1, "deliveries": 1, "attempts": 1, "keys": 0}
        pool = await create_pool(url, max_size=1)
        try:
            assert await queries.prune(pool, older_than_days=7) == 1
        finally:
            await pool.close()
        left = await conn.fetchrow(
            """SELECT (SELECT count(*) FROM gateway.deliveries) AS deliveries,
                      (SELECT count(*) FROM gateway.delivery_attempts) AS attempts"""
        )
        assert dict(left) == {"deliveries": 0, "attempts": 0}
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
