"""What the delivery worker counts itself: outcomes of attempts and the lag from an event's
commit to the plugin's answer (exposed by forge_gateway/metrics.py), and each plugin's recent
throughput (how much its claims ask for ahead)."""

from __future__ import annotations

import time
from collections import Counter, deque

from prometheus_client import Histogram

from .models import Claimed

# From a plugin answering at once to one that was down for minutes.
LAG_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)


class DeliveryCounts:
    """Counted by the worker as outcomes are handed to the recorder (one call per attempt)."""

    def __init__(self) -> None:
        self.outcomes: Counter[tuple[str, str]] = Counter()  # (plugin, outcome)
        self.lag = Histogram(
            "forge_delivery_lag_seconds",
            "From the event's commit (its occurred_at) to the plugin's OnEvent answer, "
            "for deliveries that succeeded",
            ["plugin"],
            buckets=LAG_BUCKETS,
            registry=None,  # exposed by GatewayCollector, in the application's registry
        )
        self._lag_of: dict[str, Histogram] = {}  # each plugin's child: `labels` once, not per call

    def finished(self, delivery: Claimed, outcome: str) -> None:
        self.outcomes[delivery.plugin, outcome] += 1
        if outcome == "delivered":
            lag = time.time() - delivery.occurred_at.timestamp()
            child = self._lag_of.get(delivery.plugin)
            if child is None:
                child = self._lag_of[delivery.plugin] = self.lag.labels(delivery.plugin)
            child.observe(max(lag, 0.0))


class Throughput:
    """Calls finished per plugin over the last second or so: how many to claim ahead; and the
    most it finished in any second of the last minute: what it can take when work arrives after
    a quiet spell."""

    def __init__(self) -> None:
        self._done: Counter[str] = Counter()
        self._last: Counter[str] = Counter()
        self._since = time.monotonic()
        self._seconds: deque[tuple[float, Counter[str]]] = deque()

    def add(self, plugin: str) -> None:
        self._done[plugin] += 1

    def _roll(self) -> None:
        now = time.monotonic()
        if now - self._since >= 1.0:
            elapsed = now - self._since
            self._last = Counter({k: int(v / elapsed) for k, v in self._done.items()})
            self._seconds.append((now, self._last))
            while self._seconds and self._seconds[0][0] < now - 60:
                self._seconds.popleft()
            self._done.clear()
            self._since = now

    def per_second(self, plugin: str) -> float:
        self._roll()
        return float(max(self._last[plugin], self._done[plugin]))

    def peak(self, plugin: str) -> float:
        self._roll()
        seen = [counts[plugin] for _, counts in self._seconds]
        return float(max([self._done[plugin], *seen]))
