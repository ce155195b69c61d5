"""`create_app(settings, options, notifications)`: this service alone in an application (tests,
single-service runs); `options` tunes it (options.py) and `notifications` the application's LISTEN
connection (forge_common.notifications), production defaults when omitted."""

from __future__ import annotations

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings
from forge_common.keys import NOTIFICATION_OPTIONS
from forge_common.notifications import NotificationOptions

from .options import Options
from .service import service_with


def create_app(
    settings: Settings,
    options: Options | None = None,
    notifications: NotificationOptions | None = None,
) -> web.Application:
    app = create_common_app(settings, [service_with(options)])
    if notifications is not None:
        app[NOTIFICATION_OPTIONS] = notifications
    return app
