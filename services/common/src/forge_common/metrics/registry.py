"""The registry of one application and its `/metrics` handler.

A registry per application (not prometheus_client's global one), so tests and benchmarks that
run several applications in one process never collide, and `forge serve --all` has one
`/metrics` for the three services. Most metrics are read at scrape time by collectors over
state the services keep anyway; `add_query` covers what only the database knows (the outbox
backlog, deliveries by state), each query bounded in time so a slow or absent database never
holds up a scrape: its metrics are then left out and `forge_metrics_query_up` says which.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.aiohttp import make_aiohttp_handler
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .requests import RequestMetrics

log = logging.getLogger(__name__)

QUERY_TIMEOUT = 2.0  # seconds one scrape-time query may take
PATH = "/metrics"

Query = Callable[[], Awaitable[Iterable[Metric]]]


def gauge(
    name: str, doc: str, value: float | None = None, labels: Sequence[str] = ()
) -> GaugeMetricFamily:
    """A gauge family: pass `value`, or `labels` and then `add_metric(values, value)`."""
    return GaugeMetricFamily(name, doc, value=value, labels=labels or None)


def counter(
    name: str, doc: str, value: float | None = None, labels: Sequence[str] = ()
) -> CounterMetricFamily:
    """A counter family (exposed with `_total`) read from a running count."""
    return CounterMetricFamily(name, doc, value=value, labels=labels or None)


class _Snapshot(Collector):
    """What the last scrape's queries found."""

    def __init__(self) -> None:
        self.families: list[Metric] = []

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = RequestMetrics(self.registry)  # registers itself
        self._queries: list[tuple[str, Query]] = []
        self._snapshot = _Snapshot()
        self.registry.register(self._snapshot)
        self._expose = make_aiohttp_handler(self.registry)

    def add_collector(self, collector: Collector) -> None:
        self.registry.register(collector)

    def add_query(self, name: str, query: Query) -> None:
        """`query()` runs at each scrape; `name` labels `forge_metrics_query_up`."""
        self._queries.append((name, query))

    async def refresh(self) -> None:
        """Run the scrape-time queries, each bounded by QUERY_TIMEOUT."""
        families: list[Metric] = []
        up = gauge(
            "forge_metrics_query_up",
            "1 when a scrape-time query answered (0: its metrics are missing from this scrape)",
            labels=["query"],
        )
        for name, query in self._queries:
            try:
                async with asyncio.timeout(QUERY_TIMEOUT):
                    families.extend(await query())
            except Exception as exc:  # the database may be down: the rest is still worth having
                log.debug("metrics query %s failed: %s", name, exc)
                up.add_metric([name], 0)
            else:
                up.add_metric([name], 1)
        if self._queries:
            families.append(up)
        self._snapshot.families = families

    async def handle(self, request: web.Request) -> web.Response:
        await self.refresh()
        return await self._expose(request)  # type: ignore[return-value]


METRICS = web.AppKey("metrics", Metrics)


async def metrics_handler(request: web.Request) -> web.Response:
    return await request.app[METRICS].handle(request)


def add_metrics_route(app: web.Application) -> None:
    app.router.add_get(PATH, metrics_handler)
