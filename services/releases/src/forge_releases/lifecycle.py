"""Cleanup contexts of the releases service: the change listener and the download counter.

Both are registered after the common database pool, so on shutdown they stop before it closes:
the last download counts are written with the pool still open.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from aiohttp import web
from forge_common.keys import DB_POOL, SETTINGS

from .keys import CHANGE_LISTENER, DOWNLOAD_COUNTER, LISTENER_TASK, LISTENER_TUNING, RELEASE_CACHE
from .listener import ChangeListener


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def listener_context(app: web.Application) -> AsyncIterator[None]:
    listener = ChangeListener(app[SETTINGS].database_url, app[RELEASE_CACHE], app[LISTENER_TUNING])
    app[CHANGE_LISTENER] = listener
    app[LISTENER_TASK] = asyncio.create_task(listener.run(), name="releases-change-listener")
    yield
    await _stop(app[LISTENER_TASK])


async def counter_context(app: web.Application) -> AsyncIterator[None]:
    counter = app[DOWNLOAD_COUNTER]
    task = asyncio.create_task(counter.run(app[DB_POOL]), name="releases-download-counter")
    yield
    await _stop(task)
    await counter.flush(app[DB_POOL])  # clean shutdown: nothing pending is lost
