"""`create_app(settings)`: this service alone in an application (tests, single-service runs)."""

from __future__ import annotations

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings

from .service import SERVICE


def create_app(settings: Settings) -> web.Application:
    return create_common_app(settings, [SERVICE])
