"""Cleanup contexts of the gateway, registered in this order: plugins join before deliveries
start, and on shutdown deliveries stop before the plugins get Shutdown. Both come after the
common database pool, so it is open for as long as they run."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web
from forge_common.keys import DB_POOL, NOTIFICATIONS
from forge_common.outage import database

from .keys import DELIVERY_WORKER, PLUGIN_MANAGER


async def plugin_manager_context(app: web.Application) -> AsyncIterator[None]:
    """Plugins are joined while the application runs."""
    manager = app[PLUGIN_MANAGER]
    await manager.start()
    try:
        yield
    finally:
        await manager.stop()


async def delivery_context(app: web.Application) -> AsyncIterator[None]:
    """Deliver while the application runs (registered after the plugin manager's)."""
    worker = app[DELIVERY_WORKER]
    worker.database = database(app)  # one tracker of the database's outages per process
    await worker.start(app[DB_POOL], app[NOTIFICATIONS])
    try:
        yield
    finally:
        await worker.stop()
