"""Cleanup contexts and startup hooks of the releases service: the cache's subscription to change
notifications, the download counter and the sweep of temporary upload files.

The contexts are registered after the common database pool and the shared LISTEN connection
(`forge_common.app.create_app`), so on shutdown they stop before those close: the last download
counts are written with the pool still open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from forge_common import tasks
from forge_common.keys import DB_POOL, NOTIFICATIONS

from .keys import DOWNLOAD_COUNTER, OPTIONS, RELEASE_CACHE, STORAGE
from .read.cache import CHANNEL
from .storage import StorageUnavailable

log = logging.getLogger(__name__)

# seconds without a write: far beyond the upload idle timeout (options.py), so surely dead
ABANDONED_AFTER = 3600.0


async def _stop(task: asyncio.Task[None]) -> None:
    await tasks.stop(task)


async def listener_context(app: web.Application) -> AsyncIterator[None]:
    """The release cache hears `forge_releases` on the process's one LISTEN connection
    (`forge_common.notifications`). It is on only while delivery is proven, and each proof starts
    it empty (notifications sent meanwhile were lost); while delivery is not proven it is off
    and requests query the database."""
    cache, notifications = app[RELEASE_CACHE], app[NOTIFICATIONS]
    subscription = await notifications.subscribe(
        CHANNEL,
        cache.on_notification,
        on_state=lambda listening: cache.reset(enabled=listening),
    )
    try:
        yield
    finally:
        await notifications.unsubscribe(subscription)
        cache.reset(enabled=False)


async def counter_context(app: web.Application) -> AsyncIterator[None]:
    counter = app[DOWNLOAD_COUNTER]
    interval = app[OPTIONS].counter_flush_interval
    task = asyncio.create_task(
        counter.run(app[DB_POOL], interval), name="releases-download-counter"
    )
    yield
    await _stop(task)
    await counter.flush(app[DB_POOL])  # clean shutdown: nothing pending is lost


async def storage_context(app: web.Application) -> AsyncIterator[None]:
    """Closes the storage's client at the end. At startup, temporary files of uploads cut off by
    a crash (Storage.sweep_incoming) are deleted in the background, so a slow store never delays
    startup; only those idle for ABANDONED_AFTER: another replica sharing the storage may be
    receiving into the others right now."""
    task = asyncio.create_task(_sweep_incoming(app), name="releases-sweep-incoming")
    yield
    await _stop(task)
    await app[STORAGE].close()


async def _sweep_incoming(app: web.Application) -> None:
    try:
        deleted = await app[STORAGE].sweep_incoming(ABANDONED_AFTER)
    except StorageUnavailable as exc:
        log.warning("could not sweep abandoned uploads: %s", exc)
        return
    if deleted:
        log.warning("deleted %d abandoned temporary upload file(s)", deleted)
