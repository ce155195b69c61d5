"""`create_app(settings, options)`: this service alone in an application (tests, single-service
runs); `options` default to production's."""

from __future__ import annotations

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings
from forge_common.notifications import NotificationOptions
from forge_common.service import tuned

from .options import Options
from .service import SERVICE, setup


def create_app(
    settings: Settings,
    options: Options | None = None,
    notifications: NotificationOptions | None = None,
) -> web.Application:
    service = tuned(SERVICE, setup, options or Options())
    return create_common_app(settings, [service], notifications)
