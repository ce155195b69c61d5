"""The releases service's metrics, read at scrape time (docs/operations.md "Metrics"): the update
check's cache and downloads."""

from __future__ import annotations

from collections.abc import Iterator

from aiohttp import web
from forge_common.metrics import METRICS, counter, gauge
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from .counter import DownloadCounter
from .insights.counter import InsightsCounter
from .read.cache import ReleaseCache


class ReleasesCollector(Collector):
    def __init__(
        self, cache: ReleaseCache, downloads: DownloadCounter, insights: InsightsCounter
    ) -> None:
        self._cache = cache
        self._downloads = downloads
        self._insights = insights

    def collect(self) -> Iterator[Metric]:
        cache = self._cache
        yield counter(
            "forge_update_cache_hits",
            "Update checks answered from a prepared answer",
            cache.hits,
        )
        yield counter(
            "forge_update_cache_misses",
            "Update checks whose answer was computed (then kept)",
            cache.misses,
        )
        entries = gauge(
            "forge_update_cache_entries", "Entries in the update-check cache", labels=["kind"]
        )
        for kind, size in cache.sizes().items():
            entries.add_metric([kind], size)
        yield entries
        invalidations = counter(
            "forge_update_cache_invalidations",
            "Cache invalidations: a repository, every name, or everything",
            labels=["kind"],
        )
        for kind in ("repo", "names", "all"):
            invalidations.add_metric([kind], cache.invalidations[kind])
        yield invalidations
        yield gauge(
            "forge_update_cache_enabled",
            "1 while change notifications arrive and the cache is in use",
            1 if cache.enabled else 0,
        )
        yield counter("forge_downloads", "Full asset downloads served", self._downloads.completed)
        yield counter(
            "forge_download_bytes",
            "Asset bytes sent (full and partial downloads)",
            self._downloads.bytes_sent,
        )
        yield counter(
            "forge_download_zero_copy_bytes",
            "Of those bytes, sent by the kernel straight from the file (sendfile, no proxy)",
            self._downloads.bytes_zero_copy,
        )
        # totals only: a label per version or repository would grow without bound
        yield counter(
            "forge_insights_checks_written",
            "Update checks and feed answers counted and written to the insights tables",
            self._insights.checks_written,
        )
        yield counter(
            "forge_insights_downloads_written",
            "Downloads counted and written to the insights tables",
            self._insights.downloads_written,
        )


def add_releases_metrics(
    app: web.Application,
    cache: ReleaseCache,
    downloads: DownloadCounter,
    insights: InsightsCounter,
) -> None:
    app[METRICS].add_collector(ReleasesCollector(cache, downloads, insights))
