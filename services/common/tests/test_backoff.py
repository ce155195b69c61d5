"""Backoff: doubling up to the cap, jitter around the base, reset after a success."""

from __future__ import annotations

import time

import pytest
from forge_common.backoff import Backoff


def test_delays_double_up_to_the_cap_and_stay_there() -> None:
    backoff = Backoff(0.5, 3.0)
    assert [backoff.next() for _ in range(6)] == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_reset_starts_again_from_the_initial_delay() -> None:
    backoff = Backoff(1.0, 60.0, factor=3)
    assert [backoff.next() for _ in range(3)] == [1.0, 3.0, 9.0]
    assert backoff.current == 27.0
    backoff.reset()
    assert backoff.current == 1.0
    assert backoff.next() == 1.0


def test_jitter_spreads_each_delay_around_its_base() -> None:
    drawn: list[tuple[float, float]] = []

    def highest(low: float, high: float) -> float:
        drawn.append((low, high))
        return high

    backoff = Backoff(1.0, 2.0, jitter=0.2, uniform=highest)
    assert [backoff.next() for _ in range(3)] == pytest.approx([1.2, 2.4, 2.4])
    assert drawn == [pytest.approx((0.8, 1.2))] * 3


def test_real_jitter_stays_within_its_bounds() -> None:
    backoff = Backoff(10.0, 10.0, jitter=0.1)
    assert all(9.0 <= backoff.next() <= 11.0 for _ in range(200))


@pytest.mark.parametrize(
    ("initial", "maximum", "factor", "jitter"),
    [(0, 1, 2, 0), (2, 1, 2, 0), (1, 2, 0.5, 0), (1, 2, 2, 1), (1, 2, 2, -0.1)],
)
def test_settings_that_cannot_make_sense_are_refused(
    initial: float, maximum: float, factor: float, jitter: float
) -> None:
    with pytest.raises(ValueError):
        Backoff(initial, maximum, factor=factor, jitter=jitter)


async def test_sleep_waits_the_next_delay() -> None:
    backoff = Backoff(0.02, 1.0)
    started = time.monotonic()
    assert await backoff.sleep() == 0.02
    assert time.monotonic() - started >= 0.015
    assert backoff.current == 0.04
