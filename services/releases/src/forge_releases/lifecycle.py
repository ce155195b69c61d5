"""Cleanup contexts and startup hooks of the releases service: the change listener, the download
counter and the sweep of temporary upload files.

The contexts are registered after the common database pool, so on shutdown they stop before it
closes: the last download counts are written with the pool still open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiohttp import web
from forge_common.keys import DB_POOL, SETTINGS

from .keys import CHANGE_LISTENER, DOWNLOAD_COUNTER, LISTENER_TASK, OPTIONS, RELEASE_CACHE, STORAGE
from .publish.uploads import sweep_abandoned
from .read.listener import ChangeListener

log = logging.getLogger(__name__)


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def listener_context(app: web.Application) -> AsyncIterator[None]:
    tuning = app[OPTIONS].listener
    listener = ChangeListener(app[SETTINGS].database_url, app[RELEASE_CACHE], tuning)
    app[CHANGE_LISTENER] = listener
    app[LISTENER_TASK] = asyncio.create_task(listener.run(), name="releases-change-listener")
    yield
    await _stop(app[LISTENER_TASK])


async def counter_context(app: web.Application) -> AsyncIterator[None]:
    counter = app[DOWNLOAD_COUNTER]
    interval = app[OPTIONS].counter_flush_interval
    task = asyncio.create_task(
        counter.run(app[DB_POOL], interval), name="releases-download-counter"
    )
    yield
    await _stop(task)
    await counter.flush(app[DB_POOL])  # clean shutdown: nothing pending is lost


async def sweep_on_startup(app: web.Application) -> None:
    """Temporary files of uploads cut off by a crash (uploads.sweep_abandoned)."""
    deleted = await asyncio.to_thread(sweep_abandoned, app[STORAGE])
    if deleted:
        log.warning("deleted %d abandoned temporary upload file(s)", deleted)
