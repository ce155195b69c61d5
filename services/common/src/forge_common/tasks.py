"""Stopping a background task (docs/decisions.md "Stopping a background task").

`task.cancel()` then `await task` waits forever when the cancellation is swallowed: a library
that turns a cancellation into its own timeout (aiohttp's client timeout when its timer fires at
the same moment) raises TimeoutError instead, the loop catches that as a failed round and carries
on, and the service never finishes stopping. So `stop` cancels again until the task has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

# how long one cancellation may take before it is sent again: a loop that swallowed one is
# waiting in its next round by then
_AGAIN_AFTER = 1.0


async def stop(task: asyncio.Task[Any] | None) -> None:
    """Cancel `task` and wait until it has ended; an exception it ended with is raised."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=_AGAIN_AFTER)
    with contextlib.suppress(asyncio.CancelledError):
        await task
