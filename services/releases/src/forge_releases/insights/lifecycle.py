"""The insights counter's background work: a write every few seconds (and a last one at clean
shutdown, after the server stopped taking requests) and the pruning of rows past retention."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
from aiohttp import web
from forge_common import tasks
from forge_common.keys import DB_POOL, SETTINGS

from ..keys import INSIGHTS, OPTIONS
from . import queries
from .proxy_log import ingest_forever

log = logging.getLogger(__name__)


async def _prune_forever(app: web.Application) -> None:
    pool, keep = app[DB_POOL], app[SETTINGS].insights_retention_days
    while True:
        try:
            await queries.prune(pool, datetime.now(UTC), keep)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("could not prune insights yet: %s", exc)
        await asyncio.sleep(app[OPTIONS].insights_prune_interval)


async def insights_context(app: web.Application) -> AsyncIterator[None]:
    counter, pool = app[INSIGHTS], app[DB_POOL]
    settings = app[SETTINGS]
    running = [
        asyncio.create_task(
            counter.run(pool, app[OPTIONS].insights_flush_interval), name="releases-insights"
        ),
        asyncio.create_task(_prune_forever(app), name="releases-insights-prune"),
    ]
    if settings.insights_enabled and settings.insights_proxy_log is not None:
        reading = ingest_forever(
            app, settings.insights_proxy_log, app[OPTIONS].insights_flush_interval
        )
        running.append(asyncio.create_task(reading, name="releases-insights-proxy-log"))
    yield
    for task in running:
        await tasks.stop(task)
    counter.roll()
    await counter.flush(pool)  # clean shutdown: nothing counted is lost
