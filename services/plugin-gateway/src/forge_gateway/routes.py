"""The route table of the plugin gateway."""

from __future__ import annotations

from aiohttp import web

from . import handlers


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/admin/plugins", handlers.admin_plugins)
    # Every method: the manifest, not the router, decides (404 unknown path, 405 with Allow).
    app.router.add_route("*", "/api/v1/plugins/{plugin}/{path:.*}", handlers.plugin_route)
