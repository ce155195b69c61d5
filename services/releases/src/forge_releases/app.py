"""`create_app(settings, options)`: this service alone in an application (tests, single-service
runs); `options` tunes it (options.py), production defaults when omitted."""

from __future__ import annotations

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings

from .options import Options
from .service import service_with


def create_app(settings: Settings, options: Options | None = None) -> web.Application:
    return create_common_app(settings, [service_with(options)])
