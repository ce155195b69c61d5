"""The route table of the plugin gateway."""

from __future__ import annotations

from aiohttp import web

from . import openapi
from .events import handlers as event_handlers
from .plugins import handlers as plugin_handlers


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/admin/plugins", plugin_handlers.admin_plugins)
    app.router.add_get(openapi.DOCUMENT_PATH, openapi.serve)
    app.router.add_get("/api/v1/admin/plugins/{plugin}/deliveries", event_handlers.list_deliveries)
    app.router.add_get(
        "/api/v1/admin/plugins/{plugin}/deliveries/{id}", event_handlers.get_delivery
    )
    app.router.add_post(
        "/api/v1/admin/plugins/{plugin}/deliveries/redeliver", event_handlers.redeliver_all
    )
    app.router.add_post(
        "/api/v1/admin/plugins/{plugin}/deliveries/{id}/redeliver", event_handlers.redeliver_one
    )
    # Every method: the manifest, not the router, decides (404 unknown path, 405 with Allow).
    app.router.add_route("*", "/api/v1/plugins/{plugin}/{path:.*}", plugin_handlers.plugin_route)
    # Producers' relays only; the reverse proxy never routes /internal/ (docs/events.md).
    app.router.add_post("/internal/v1/events", event_handlers.receive_events)
