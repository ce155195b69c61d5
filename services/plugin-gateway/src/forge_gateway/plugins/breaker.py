"""A circuit breaker per plugin, fed by call outcomes and health checks.

    closed ──(failure or slow-call rate over the window, or failed health checks)──▶ open
    open ──(open_seconds elapsed)──▶ half-open ──(HealthCheck probe ok)──▶ closed
                                               └─(probe fails)──────────▶ open

While open or half-open no call reaches the plugin: HTTP routes answer 503 with Retry-After and
deliveries wait without spending attempts. Only the supervisor's HealthCheck probes a half-open
plugin, so one probe, not a burst of user traffic, decides whether it is back.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from enum import StrEnum

from ..options import BreakerOptions


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    def __init__(
        self, options: BreakerOptions, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._options = options
        self._clock = clock
        self._outcomes: deque[bool] = deque(maxlen=options.window)  # True = failed
        self._health_failures = 0
        self._opened_at: float | None = None
        self.opened_count = 0
        self.last_reason = ""

    @property
    def state(self) -> BreakerState:
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() - self._opened_at >= self._options.open_seconds:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    def allows_calls(self) -> bool:
        return self._opened_at is None

    def retry_after(self) -> int:
        """Whole seconds until a probe may close the circuit (at least 1)."""
        if self._opened_at is None:
            return 1
        left = self._options.open_seconds - (self._clock() - self._opened_at)
        return max(1, math.ceil(left))

    def seconds_until_probe(self) -> float:
        if self._opened_at is None:
            return 0.0
        return max(0.0, self._options.open_seconds - (self._clock() - self._opened_at))

    def record_call(self, *, failed: bool, seconds: float) -> None:
        """One call's outcome; a call slower than the slow-call limit counts as failed."""
        if self._opened_at is not None:
            return  # calls that began before the circuit opened do not decide anything now
        slow = seconds > self._options.slow_call_seconds
        self._outcomes.append(failed or slow)
        count = len(self._outcomes)
        bad = sum(self._outcomes)
        if count >= self._options.min_calls and bad / count >= self._options.failure_rate:
            self._open(f"{bad} of the last {count} calls failed or were slow")

    def record_health(self, *, healthy: bool) -> None:
        """A HealthCheck outcome: closes a half-open circuit, or counts towards opening."""
        if healthy:
            self._health_failures = 0
            if self.state is BreakerState.HALF_OPEN:
                self._close()
            return
        self._health_failures += 1
        if self._opened_at is not None:
            if self.state is BreakerState.HALF_OPEN:
                self._open("the half-open health probe failed")
        elif self._health_failures >= self._options.health_failures:
            self._open(f"{self._health_failures} health check(s) failed in a row")

    def reset(self) -> None:
        """A plugin that just initialized and sent its manifest starts with a closed circuit."""
        self._health_failures = 0
        self._close()

    def snapshot(self) -> dict[str, object]:
        """For the admin listing."""
        return {
            "state": str(self.state),
            "recent_calls": len(self._outcomes),
            "recent_failures": sum(self._outcomes),
            "consecutive_health_failures": self._health_failures,
            "times_opened": self.opened_count,
            "retry_after": self.retry_after() if self._opened_at is not None else None,
            "reason": self.last_reason or None,
        }

    def _open(self, reason: str) -> None:
        self._opened_at = self._clock()
        self.opened_count += 1
        self.last_reason = reason
        self._outcomes.clear()

    def _close(self) -> None:
        self._opened_at = None
        self._outcomes.clear()
        self.last_reason = ""
