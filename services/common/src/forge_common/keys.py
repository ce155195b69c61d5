"""Typed application keys shared by every service."""

from __future__ import annotations

import asyncpg
from aiohttp import web

from .config import Settings

DB_POOL = web.AppKey("db_pool", asyncpg.Pool)
SETTINGS = web.AppKey("settings", Settings)
