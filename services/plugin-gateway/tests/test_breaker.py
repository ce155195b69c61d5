"""The circuit breaker (docs/plugins.md "Circuit breaker"): opens on a failure or slow-call rate
over the window or on failed health checks; half-open after the open period; a health probe
decides."""

from __future__ import annotations

from forge_gateway.options import BreakerOptions
from forge_gateway.plugins.breaker import BreakerState, CircuitBreaker

OPTIONS = BreakerOptions(
    window=4,
    min_calls=4,
    failure_rate=0.5,
    slow_call_seconds=1.0,
    health_failures=2,
    open_seconds=10.0,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_at_the_failure_rate_over_the_window_only_after_min_calls() -> None:
    breaker = CircuitBreaker(OPTIONS, Clock())
    for failed in (True, True, False):
        breaker.record_call(failed=failed, seconds=0.1)
    assert breaker.state is BreakerState.CLOSED  # 3 calls: below min_calls
    breaker.record_call(failed=False, seconds=0.1)
    assert breaker.state is BreakerState.OPEN  # 2 of 4 failed
    assert not breaker.allows_calls()


def test_slow_calls_count_as_failures() -> None:
    breaker = CircuitBreaker(OPTIONS, Clock())
    for _ in range(4):
        breaker.record_call(failed=False, seconds=1.5)
    assert breaker.state is BreakerState.OPEN
    assert "slow" in (breaker.snapshot()["reason"] or "")


def test_successes_keep_it_closed() -> None:
    breaker = CircuitBreaker(OPTIONS, Clock())
    for index in range(20):
        breaker.record_call(failed=index % 4 == 0, seconds=0.1)  # 25 % failures
    assert breaker.allows_calls()


def test_failed_health_checks_in_a_row_open_it() -> None:
    breaker = CircuitBreaker(OPTIONS, Clock())
    breaker.record_health(healthy=False)
    breaker.record_health(healthy=True)
    breaker.record_health(healthy=False)
    assert breaker.allows_calls()  # not in a row
    breaker.record_health(healthy=False)
    assert breaker.state is BreakerState.OPEN


def test_half_open_after_the_open_period_then_the_probe_decides() -> None:
    clock = Clock()
    breaker = CircuitBreaker(OPTIONS, clock)
    for _ in range(4):
        breaker.record_call(failed=True, seconds=0.1)
    assert breaker.retry_after() == 10
    clock.now += 4.2
    assert breaker.retry_after() == 6  # rounded up
    breaker.record_health(healthy=True)  # a success while open does not close it early
    assert breaker.state is BreakerState.OPEN
    clock.now += 6
    assert breaker.state is BreakerState.HALF_OPEN
    assert not breaker.allows_calls()  # only the probe goes through
    breaker.record_health(healthy=False)
    assert breaker.state is BreakerState.OPEN  # probe failed: open for another period
    clock.now += 10
    breaker.record_health(healthy=True)
    assert breaker.state is BreakerState.CLOSED and breaker.allows_calls()
    assert breaker.opened_count == 2


def test_calls_finishing_while_open_do_not_count() -> None:
    clock = Clock()
    breaker = CircuitBreaker(OPTIONS, clock)
    for _ in range(4):
        breaker.record_call(failed=True, seconds=0.1)
    breaker.record_call(failed=False, seconds=0.1)
    clock.now += 10
    breaker.record_health(healthy=True)
    assert breaker.snapshot()["recent_calls"] == 0
