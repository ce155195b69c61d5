"""Typed application keys shared by every service."""

from __future__ import annotations

import asyncpg
from aiohttp import web

from .config import Settings
from .notifications import NotificationOptions, Notifications

DB_POOL = web.AppKey("db_pool", asyncpg.Pool)
SETTINGS = web.AppKey("settings", Settings)
# The application's one LISTEN connection: services subscribe in their own cleanup contexts,
# registered after create_app's, so it is running when they start and outlives them.
NOTIFICATIONS = web.AppKey("notifications", Notifications)
NOTIFICATION_OPTIONS = web.AppKey("notification_options", NotificationOptions)
