"""Requests by route template, method and status, and their latency (docs/operations.md).

The route template (`/api/v2/repos/{owner}/{repo}/releases`), never the raw path, and methods
outside the HTTP set folded into OTHER, so the number of series stays bounded whatever callers
send. The labelled children are kept in a dict of our own: `labels()` takes a lock and builds a
key on every call, and the update check is hot enough for that to show.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram

UNMATCHED = "unmatched"  # no route: 404 or 405 before a handler
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# From a cached update check (~0.1 ms) to a long download.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60)


class RequestMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.count = Counter(
            "forge_http_requests",
            "HTTP requests answered, by route template, method and status",
            ["route", "method", "status"],
            registry=registry,
        )
        self.duration = Histogram(
            "forge_http_request_duration_seconds",
            "Time from the request reaching the application to its answer (body included)",
            ["route", "method"],
            buckets=BUCKETS,
            registry=registry,
        )
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def observe(self, request: web.BaseRequest, status: int, seconds: float) -> None:
        resource = request.match_info.route.resource  # type: ignore[attr-defined]
        route: str = resource.canonical if resource is not None else UNMATCHED
        method = request.method if request.method in METHODS else "OTHER"
        key = (route, method, status)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (
                self.count.labels(route, method, str(status)),
                self.duration.labels(route, method),
            )
        children[0].inc()
        children[1].observe(seconds)
