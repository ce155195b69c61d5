"""The gateway's metrics (docs/operations.md "Metrics"): plugin and breaker states and calls in
flight read at scrape time, deliveries by plugin and status counted by the database at each
scrape, and what the delivery worker counts itself: outcomes of attempts and the lag from an
event's commit to the plugin's OnEvent answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from aiohttp import web
from forge_common.keys import DB_POOL
from forge_common.metrics import METRICS, counter, gauge
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from .events.counts import DeliveryCounts
from .plugins.breaker import BreakerState
from .plugins.state import PluginState

if TYPE_CHECKING:
    from .plugins.manager import PluginManager


class Delivering(Protocol):
    """What the collector reads of the delivery worker (events/delivery.py) at scrape time."""

    @property
    def in_flight(self) -> Counter[str]: ...

    @property
    def counts(self) -> DeliveryCounts: ...


class GatewayCollector(Collector):
    def __init__(self, manager: PluginManager, worker: Delivering) -> None:
        self._manager = manager
        self._worker = worker

    def collect(self) -> Iterator[Metric]:
        states = gauge(
            "forge_plugin_state", "1 for each plugin's current state", labels=["plugin", "state"]
        )
        breakers = gauge(
            "forge_plugin_breaker_state",
            "1 for each plugin's current circuit breaker state",
            labels=["plugin", "state"],
        )
        opened = counter(
            "forge_plugin_breaker_opened", "Times a plugin's circuit opened", labels=["plugin"]
        )
        in_flight = gauge("forge_delivery_in_flight", "OnEvent calls under way", labels=["plugin"])
        for plugin in self._manager:
            for state in PluginState:
                states.add_metric([plugin.name, state.value], 1 if plugin.state is state else 0)
            current = plugin.breaker.state
            for breaker_state in BreakerState:
                breakers.add_metric(
                    [plugin.name, breaker_state.value], 1 if current is breaker_state else 0
                )
            opened.add_metric([plugin.name], plugin.breaker.opened_count)
            in_flight.add_metric([plugin.name], self._worker.in_flight[plugin.name])
        yield from (states, breakers, opened, in_flight)
        counts = self._worker.counts
        attempts = counter(
            "forge_delivery_attempts",
            "OnEvent attempts by plugin and outcome (delivered, retry, dead, released, skipped)",
            labels=["plugin", "outcome"],
        )
        for (plugin_name, outcome), value in sorted(counts.outcomes.items()):
            attempts.add_metric([plugin_name, outcome], value)
        yield attempts
        yield from counts.lag.collect()


async def _deliveries(app: web.Application) -> list[Metric]:
    """Deliveries stored, by plugin and status (along deliveries_status_idx); dead letters are
    status "dead"."""
    rows = await app[DB_POOL].fetch(
        "SELECT plugin, status, count(*) AS n FROM gateway.deliveries GROUP BY plugin, status"
    )
    family = gauge(
        "forge_deliveries",
        "Deliveries stored, by plugin and status (pending, delivered, skipped, dead)",
        labels=["plugin", "status"],
    )
    for row in rows:
        family.add_metric([row["plugin"], row["status"]], row["n"])
    return [family]


def add_gateway_metrics(app: web.Application, manager: PluginManager, worker: Delivering) -> None:
    metrics = app[METRICS]
    metrics.add_collector(GatewayCollector(manager, worker))
    metrics.add_query("deliveries", lambda: _deliveries(app))
