"""The route table of the releases service (read side; the write side adds its routes here)."""

from __future__ import annotations

from aiohttp import web

from . import publish_handlers
from .downloads import handlers as downloads
from .openapi import handler as openapi
from .read import handlers, update_check

API = "/api/v2/repos/{owner}/{repo}/releases"


def add_routes(app: web.Application) -> None:
    app.router.add_routes(
        [
            # the update check first: the router tries routes in order, and it is the hot path
            web.get(f"{API}/update", update_check.update_check),
            web.get("/api/v2/openapi.json", openapi.serve),
            web.get(API, handlers.list_releases),
            # literal suffixes before {tag}: `update` and `latest` are not tags here
            web.get(f"{API}/latest", handlers.latest_release),
            web.get(f"{API}/{{tag}}", handlers.get_release),
            web.get("/{owner}/{repo}/releases/download/{tag}/{name}", downloads.download),
            web.get("/{owner}/{repo}/releases/latest/download/{name}", downloads.latest_download),
            # write side (publish_handlers.py)
            web.post(API, publish_handlers.create_release),
            web.patch(f"{API}/{{release_id}}", publish_handlers.update_release),
            web.delete(f"{API}/{{release_id}}", publish_handlers.delete_release),
            web.post(
                f"{API}/{{release_id}}/assets",
                publish_handlers.upload_asset,
                expect_handler=publish_handlers.defer_continue,
            ),
            web.delete(f"{API}/{{release_id}}/assets/{{asset_id}}", publish_handlers.delete_asset),
        ]
    )
