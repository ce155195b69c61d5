"""Building an aiohttp application from services: the common middlewares, pool, LISTEN connection
and health routes once, then each service's routes. `forge serve --all` passes three services;
`ServiceApp` is each service's `create_app`, the service alone in an application."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Generic

from aiohttp import web
from aiohttp.typedefs import Middleware

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
from .service import OptionsT, Service, TunableSetup, all_migrations, tuned


def create_app(
    settings: Settings,
    services: Sequence[Service],
    notifications: NotificationOptions | None = None,
) -> web.Application:
    """`notifications` tunes the process's LISTEN connection (tests shorten its probe)."""
    app = base_app(settings, notifications, middlewares=[forge_middleware])
    if settings.gateway_url:  # docs/events.md: this process relays the outbox to the gateway
        app.cleanup_ctx.append(relay_context)
    app[METRICS] = Metrics()  # docs/operations.md "Metrics": one registry per application
    add_database_metrics(app)
    add_health_routes(app, all_migrations({s.name: s for s in services}))
    add_metrics_route(app)
    for service in services:
        service.setup(app, settings)
    return app


def base_app(
    settings: Settings,
    notifications: NotificationOptions | None = None,
    *,
    middlewares: Sequence[Middleware] = (),
    pool_size: tuple[int, int] = (1, 10),
) -> web.Application:
    """What every application of ours holds, a service's (`create_app`) or a process's beside
    nginx (the insights reader): its settings, the dependency outages, a pool of `pool_size`
    (fewest, most) connections and the LISTEN connection."""
    app = web.Application(middlewares=middlewares, client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[NOTIFICATION_OPTIONS] = notifications or NotificationOptions()
    app[OUTAGES] = Outages()  # docs/architecture.md "Dependency outages"
    app.cleanup_ctx.append(outages_context)
    app.cleanup_ctx.append(_pool_context(*pool_size))
    app.cleanup_ctx.append(notifications_context)
    return app


class ServiceApp(Generic[OptionsT]):
    """`create_app(settings, options, notifications)` of one service (its `service.py`): the
    service alone in an application (tests, benchmarks, single-service runs), tuned by `options`
    (its `defaults()` when omitted) and `notifications` (the LISTEN connection's)."""

    def __init__(
        self, service: Service, setup: TunableSetup[OptionsT], defaults: Callable[[], OptionsT]
    ) -> None:
        self.service = service
        self.setup = setup
        self.defaults = defaults

    def __call__(
        self,
        settings: Settings,
        options: OptionsT | None = None,
        notifications: NotificationOptions | None = None,
    ) -> web.Application:
        service = tuned(self.service, self.setup, options or self.defaults())
        return create_app(settings, [service], notifications)


def _pool_context(min_size: int, max_size: int) -> Callable[[web.Application], AsyncIterator[None]]:
    async def context(app: web.Application) -> AsyncIterator[None]:
        pool = await create_pool(app[SETTINGS].database_url, min_size=min_size, max_size=max_size)
        app[DB_POOL] = pool
        yield
        await pool.close()

    return context


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
