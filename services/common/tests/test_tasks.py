"""Stopping a background task (forge_common/tasks.py): a loop whose cancellation a library
swallowed still stops; what a task failed with is not hidden."""

from __future__ import annotations

import asyncio

import pytest
from forge_common import tasks


async def test_a_loop_that_swallowed_a_cancellation_is_cancelled_again_until_it_ends() -> None:
    swallowed = 0

    async def loop_that_turns_a_cancellation_into_a_timeout() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                if swallowed == 0:  # as aiohttp's client timeout may: raised as TimeoutError
                    swallowed += 1
                    asyncio.current_task().uncancel()  # type: ignore[union-attr]
                    continue
                raise

    task = asyncio.create_task(loop_that_turns_a_cancellation_into_a_timeout())
    await asyncio.sleep(0)
    await asyncio.wait_for(tasks.stop(task), 10)
    assert task.cancelled() and swallowed == 1


async def test_stopping_a_task_that_failed_raises_what_it_failed_with() -> None:
    async def fails() -> None:
        raise RuntimeError("broken")

    task = asyncio.create_task(fails())
    await asyncio.wait({task})
    with pytest.raises(RuntimeError, match="broken"):
        await tasks.stop(task)
    await tasks.stop(None)  # nothing started: nothing to stop
