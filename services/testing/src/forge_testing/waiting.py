"""`eventually()` (async) and `until()` (blocking): wait for an effect that crosses a process or a
connection (NOTIFY, a plugin's call, a background task, a process starting) instead of sleeping a
guessed time."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def eventually(
    check: Callable[[], bool | Awaitable[bool]],
    within: float = 5.0,
    what: str = "",
    interval: float = 0.01,
) -> None:
    """Poll `check` (sync or async) until it holds; fail the test after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        outcome = check()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if outcome:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what or check}")
        await asyncio.sleep(interval)


def until(
    check: Callable[[], bool],
    within: float,
    what: str | Callable[[], str],
    interval: float = 0.05,
) -> float:
    """Poll `check` until it holds and return the seconds it took; fail the test after `within`
    seconds. `what` names the awaited effect, or is called at the failure to describe what was
    seen instead."""
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > within:
            said = what() if callable(what) else what
            raise AssertionError(f"{said}: not within {within} s")
        time.sleep(interval)
    return time.monotonic() - began
