"""`Options`: every tuning knob of the releases service, with its production default.

`forge serve` uses `Options()`; tests pass their own to `create_app(settings, Options(...))`
(shorter intervals and timeouts) instead of changing the application's state before it starts.
The LISTEN connection that keeps the cache true is the application's (forge_common.notifications),
tuned by `forge_common.notifications.NotificationOptions` (app.py `create_app`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from forge_common.config import Settings

from .read.cache import CacheLimits


@dataclass(frozen=True, slots=True)
class Options:
    # memory bounds of the release cache
    cache: CacheLimits = field(default_factory=CacheLimits)
    # an upload that sends nothing for this many seconds is given up on (408), so a stalled
    # client does not keep its connection and temporary file forever (aiohttp has no read timeout)
    upload_idle_timeout: float = 120.0
    # seconds between two writes of the download counts gathered in memory
    counter_flush_interval: float = 2.0
    # seconds between two writes of the insights counts (insights/counter.py): at most this
    # much counting is lost when a process dies without stopping (docs/insights.md)
    insights_flush_interval: float = 2.0
    # seconds between two prunings of insights rows past their retention
    insights_prune_interval: float = 3600.0
    # seconds between two evaluations of the running rollout plans (rollouts/evaluator.py): how
    # late a step may start after its hold, and how soon a failing gate halts a plan
    # (ROLLOUT_EVALUATION_SECONDS sets it for a process; docs/rollouts.md)
    rollout_interval: float = 10.0


def with_settings(options: Options, settings: Settings) -> Options:
    """`options` with what the environment sets over them: INSIGHTS_FLUSH_SECONDS and
    ROLLOUT_EVALUATION_SECONDS (a process started as `forge serve` has no other way to be
    tuned)."""
    if settings.insights_flush_seconds is not None:
        options = replace(options, insights_flush_interval=settings.insights_flush_seconds)
    if settings.rollout_evaluation_seconds is not None:
        options = replace(options, rollout_interval=settings.rollout_evaluation_seconds)
    return options
