"""Requests by route template, method and status, and their latency (docs/operations.md).

The route template (`/api/v2/repos/{owner}/{repo}/releases`), never the raw path, and methods
outside the HTTP set folded into OTHER, so the number of series stays bounded whatever callers
send.

Counted here in plain lists and exposed by a collector at scrape time, rather than with
prometheus-client's Counter and Histogram: theirs take a lock per update and `labels()` builds a
key per call, which showed in the update check's profile (bench/RESULTS.md). The event loop is one
thread, so a list increment needs no lock.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from aiohttp.web_urldispatcher import AbstractResource
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

UNMATCHED = "unmatched"  # no route: 404 or 405 before a handler
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# From a cached update check (~0.1 ms) to a long download.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60)


class _Series:
    """One (route, method, status): a count per bucket (the last one +Inf) and the sum."""

    __slots__ = ("buckets", "total")

    def __init__(self) -> None:
        self.buckets = [0] * (len(BUCKETS) + 1)
        self.total = 0.0


class RequestMetrics(Collector):
    def __init__(self, registry: CollectorRegistry) -> None:
        # keyed by the route's resource object (hashable, one per route) to skip building the
        # template string per request; the template is read at scrape time
        self._series: dict[tuple[object, str, int], _Series] = {}
        registry.register(self)

    def observe_route(
        self, resource: AbstractResource | None, method: str, status: int, seconds: float
    ) -> None:
        """One request answered, counted under its route's `resource` (None: no route matched);
        called by the request contract (forge_common.middleware `close_request`)."""
        key = (resource, method, status)
        series = self._series.get(key)
        if series is None:
            if method not in METHODS:
                key = (key[0], "OTHER", status)
            series = self._series.setdefault(key, _Series())
        series.buckets[bisect_left(BUCKETS, seconds)] += 1
        series.total += seconds

    def collect(self) -> Iterator[Metric]:
        count = CounterMetricFamily(
            "forge_http_requests",
            "HTTP requests answered, by route template, method and status",
            labels=["route", "method", "status"],
        )
        duration = HistogramMetricFamily(
            "forge_http_request_duration_seconds",
            "Time from the request reaching the application to its answer (body included)",
            labels=["route", "method"],
        )
        # the histogram is by route and method: statuses of one route are added up
        merged: dict[tuple[str, str], tuple[list[int], float]] = {}
        for (resource, method, status), series in list(self._series.items()):
            route = resource.canonical if resource is not None else UNMATCHED  # type: ignore[attr-defined]
            count.add_metric([route, method, str(status)], sum(series.buckets))
            buckets, total = merged.get((route, method), ([0] * len(series.buckets), 0.0))
            merged[route, method] = (
                [a + b for a, b in zip(buckets, series.buckets, strict=True)],
                total + series.total,
            )
        for (route, method), (buckets, total) in merged.items():
            cumulative, running = [], 0
            for bound, n in zip([*map(str, BUCKETS), "+Inf"], buckets, strict=True):
                running += n
                cumulative.append((bound, running))
            duration.add_metric([route, method], cumulative, total)
        yield count
        yield duration
