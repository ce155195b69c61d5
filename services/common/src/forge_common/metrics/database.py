"""The database pool (read at scrape time) and the outbox backlog (one query per scrape)."""

from __future__ import annotations

from collections.abc import Iterator

from aiohttp import web
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ..keys import DB_POOL
from .registry import METRICS, gauge


class PoolCollector(Collector):
    """asyncpg's pool: connections open, idle and the maximum, and callers waiting for one."""

    def __init__(self, app: web.Application) -> None:
        self._app = app

    def collect(self) -> Iterator[Metric]:
        pool = self._app.get(DB_POOL)
        if pool is None:  # not started yet, or stopped
            return
        yield gauge("forge_db_pool_size", "Connections open in the pool", pool.get_size())
        yield gauge("forge_db_pool_idle", "Pool connections not in use", pool.get_idle_size())
        yield gauge("forge_db_pool_max", "Most connections the pool opens", pool.get_max_size())
        # asyncpg keeps waiting acquirers as the getters of its queue (no public accessor)
        getters = getattr(getattr(pool, "_queue", None), "_getters", ())
        yield gauge(
            "forge_db_pool_waiters",
            "Callers waiting for a pool connection",
            sum(1 for waiter in getters if not waiter.done()),
        )


async def _outbox(app: web.Application) -> list[Metric]:
    row = await app[DB_POOL].fetchrow(
        """SELECT count(*) AS backlog,
                  coalesce(extract(epoch FROM now() - min(occurred_at)), 0) AS oldest
             FROM core.outbox"""
    )
    assert row is not None
    return [
        gauge(
            "forge_outbox_backlog",
            "Events in the outbox not yet accepted by the gateway",
            row["backlog"],
        ),
        gauge(
            "forge_outbox_oldest_age_seconds",
            "Age of the oldest event still in the outbox (0 when it is empty)",
            float(row["oldest"]),
        ),
    ]


def add_database_metrics(app: web.Application) -> None:
    metrics = app[METRICS]
    metrics.add_collector(PoolCollector(app))
    metrics.add_query("outbox", lambda: _outbox(app))
