"""The orgs service's metrics, read at scrape time (docs/operations.md "Metrics")."""

from __future__ import annotations

from collections.abc import Iterator

from forge_common.metrics import counter, gauge
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from .overview.prepared import OverviewCache


class OverviewCacheCollector(Collector):
    def __init__(self, cache: OverviewCache) -> None:
        self._cache = cache

    def collect(self) -> Iterator[Metric]:
        cache = self._cache
        yield counter("forge_overview_cache_hits", "Overviews answered from the cache", cache.hits)
        yield counter(
            "forge_overview_cache_misses", "Overviews of a cacheable class computed", cache.misses
        )
        yield gauge("forge_overview_cache_entries", "Overviews kept", len(cache))
        invalidations = counter(
            "forge_overview_cache_invalidations",
            "Overview cache invalidations: one organization, or everything",
            labels=["kind"],
        )
        for kind in ("org", "all"):
            invalidations.add_metric([kind], cache.invalidations[kind])
        yield invalidations
