"""The route table of the plugin gateway."""

from __future__ import annotations

from aiohttp import web


def add_routes(app: web.Application) -> None:
    pass
