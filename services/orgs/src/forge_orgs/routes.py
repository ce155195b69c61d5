"""The route table of the orgs service."""

from __future__ import annotations

from aiohttp import web


def add_routes(app: web.Application) -> None:
    pass
