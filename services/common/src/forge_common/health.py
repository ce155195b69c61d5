"""Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from .keys import DB_POOL
from .render import json_response

log = logging.getLogger(__name__)


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    try:
        async with asyncio.timeout(2):
            await request.app[DB_POOL].fetchval("SELECT 1")
    except Exception:  # any failure means "not ready"; the reason goes to the log only
        log.warning("readiness check failed", exc_info=True)
        return json_response({"status": "unavailable"}, status=503)
    return json_response({"status": "ok"})


def add_health_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
