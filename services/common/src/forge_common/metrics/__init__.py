"""Prometheus metrics (docs/operations.md "Metrics"): one registry per application, served at
`/metrics` (never routed by nginx to the outside).

    metrics = app[METRICS]
    metrics.add_collector(MyCollector(state))   # read at scrape time: preferred where state exists
    metrics.add_query(async_fn)                 # an async read (SQL) run at each scrape

Requests are counted by the common middleware (requests.py), by route template, not raw path.
"""

from .registry import METRICS, Metrics, add_metrics_route, counter, gauge

__all__ = ["METRICS", "Metrics", "add_metrics_route", "counter", "gauge"]
