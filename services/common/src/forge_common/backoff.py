"""Capped exponential backoff, written once: every retry loop waits longer after each failure, up
to a cap, and replicas that failed together spread out instead of retrying in step."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable


class Backoff:
    """Delays `initial`, `initial × factor`, … up to `maximum`, each spread by ±`jitter` (a
    fraction: 0.2 gives 80 %–120 %), so at the cap a delay is at most `maximum × (1 + jitter)`.

    `uniform` draws the spread; tests pass their own to make delays exact.
    """

    __slots__ = ("_base", "_uniform", "factor", "initial", "jitter", "maximum")

    def __init__(
        self,
        initial: float,
        maximum: float,
        *,
        factor: float = 2.0,
        jitter: float = 0.0,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        if not 0 < initial <= maximum:
            raise ValueError(f"need 0 < initial <= maximum, not {initial} and {maximum}")
        if factor < 1:
            raise ValueError(f"a factor below 1 would shrink the delays: {factor}")
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter is a fraction in [0, 1): {jitter}")
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self._uniform = uniform
        self._base = initial

    @property
    def current(self) -> float:
        """The delay `next()` returns next, before jitter."""
        return self._base

    def next(self) -> float:
        """The delay to wait now; the one after grows by `factor`, up to `maximum`."""
        delay = self._base
        self._base = min(self._base * self.factor, self.maximum)
        if self.jitter:
            delay *= self._uniform(1 - self.jitter, 1 + self.jitter)
        return delay

    def reset(self) -> None:
        """After a success: the next failure waits `initial` again."""
        self._base = self.initial

    async def sleep(self) -> float:
        """Wait `next()` seconds; returns how long."""
        delay = self.next()
        await asyncio.sleep(delay)
        return delay
