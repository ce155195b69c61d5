"""Building an aiohttp application from services: the common middlewares, pool, LISTEN connection
and health routes once, then each service's routes. `forge serve --all` passes three services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from aiohttp import web

from .config import Settings
from .db import create_pool
from .health import add_health_routes
from .keys import DB_POOL, NOTIFICATION_OPTIONS, NOTIFICATIONS, SETTINGS
from .metrics import METRICS, Metrics, add_metrics_route
from .metrics.database import add_database_metrics
from .middleware import forge_middleware
from .notifications import NotificationOptions, Notifications
from .outage import OUTAGES, Outages, outages_context
from .relay import relay_context
from .service import Service, all_migrations


def create_app(
    settings: Settings,
    services: Sequence[Service],
    notifications: NotificationOptions | None = None,
) -> web.Application:
    """`notifications` tunes the process's LISTEN connection (tests shorten its probe)."""
    app = web.Application(
        middlewares=[forge_middleware],
        client_max_size=settings.max_body_bytes,
    )
    app[SETTINGS] = settings
    app[NOTIFICATION_OPTIONS] = notifications or NotificationOptions()
    app[OUTAGES] = Outages()  # docs/architecture.md "Dependency outages"
    app.cleanup_ctx.append(outages_context)
    app.cleanup_ctx.append(_pool_context)
    app.cleanup_ctx.append(notifications_context)
    if settings.gateway_url:  # docs/events.md: this process relays the outbox to the gateway
        app.cleanup_ctx.append(relay_context)
    app[METRICS] = Metrics()  # docs/operations.md "Metrics": one registry per application
    add_database_metrics(app)
    add_health_routes(app, all_migrations({s.name: s for s in services}))
    add_metrics_route(app)
    for service in services:
        service.setup(app, settings)
    return app


async def _pool_context(app: web.Application) -> AsyncIterator[None]:
    pool = await create_pool(app[SETTINGS].database_url)
    app[DB_POOL] = pool
    yield
    await pool.close()


async def notifications_context(app: web.Application) -> AsyncIterator[None]:
    """Cleanup context: `app[NOTIFICATIONS]` runs while the application does. It connects once
    something subscribes, so a process nobody listens in costs no connection."""
    notifications = Notifications(app[SETTINGS].database_url, app[NOTIFICATION_OPTIONS])
    app[NOTIFICATIONS] = notifications
    notifications.start()
    try:
        yield
    finally:
        await notifications.stop()
