"""Cleanup contexts of the gateway, registered in this order: plugins join before deliveries
start, and on shutdown deliveries stop before the plugins get Shutdown. Both come after the
common database pool, so it is open for as long as they run. The release health collector runs
last (it calls joined plugins, on the common pool). The delivery worker has a small
pool of its own (docs/events.md "Under overload"): a backlog never takes the connections the HTTP
handlers answer with, and the handlers never delay the lease heartbeat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web
from forge_common import tasks
from forge_common.db import create_pool
from forge_common.keys import DB_POOL, NOTIFICATIONS, SETTINGS
from forge_common.outage import database

from .keys import DELIVERY_WORKER, HEALTH_COLLECTOR, PLUGIN_MANAGER


async def plugin_manager_context(app: web.Application) -> AsyncIterator[None]:
    """Plugins are joined while the application runs."""
    manager = app[PLUGIN_MANAGER]
    await manager.start()
    try:
        yield
    finally:
        await manager.stop()


# The delivery worker's statements are prepared once per connection (asyncpg's statement cache)
# and handle a batch each, so PostgreSQL would soon plan them once for all arguments: a generic
# plan, made when the tables were small and then kept. After a quiet start, the plan of the
# outcome statement read the whole deliveries table for every batch of outcomes, 30-50 ms a
# statement once 55,000 deliveries were stored. Planned for each batch's own arguments, it reads
# only the batch's rows; planning a statement costs well under a millisecond, for up to 500
# deliveries (docs/events.md "Drain").
DELIVERY_SESSION = {"synchronous_commit": "off", "plan_cache_mode": "force_custom_plan"}


async def delivery_context(app: web.Application) -> AsyncIterator[None]:
    """Deliver while the application runs (registered after the plugin manager's)."""
    worker = app[DELIVERY_WORKER]
    worker.database = database(app)  # one tracker of the database's outages per process
    # Its commits do not wait for the WAL flush: a PostgreSQL crash may lose the last fraction of
    # a second of claims, renewals and outcomes, and delivery is at least once already; on a busy
    # disk the flush would hold up every call waiting on those statements (docs/events.md).
    # Each of its statements is planned for its own arguments (DELIVERY_SESSION).
    pool = await create_pool(
        app[SETTINGS].database_url,
        min_size=1,
        max_size=worker.options.pool_size,
        server_settings=DELIVERY_SESSION,
    )
    try:
        await worker.start(pool, app[NOTIFICATIONS])
        try:
            yield
        finally:
            await worker.stop()
    finally:
        await pool.close()


# How long a stopping gateway lets a round of health calls finish before cancelling it.
HEALTH_STOP_GRACE = 2.0


async def health_collector_context(app: web.Application) -> AsyncIterator[None]:
    """Ask plugins for release health while the application runs (docs/rollouts.md "From a
    plugin"); asked to stop, a round under way gets a short grace, then is cancelled."""
    collector = app[HEALTH_COLLECTOR]
    collector.database = database(app)  # one tracker of the database's outages per process
    stopping = asyncio.Event()
    task = asyncio.create_task(
        collector.run(app[DB_POOL], stopping), name="gateway-release-health-collector"
    )
    try:
        yield
    finally:
        stopping.set()
        await asyncio.wait({task}, timeout=HEALTH_STOP_GRACE)
        await tasks.stop(task)
