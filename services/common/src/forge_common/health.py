"""Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from .keys import DB_POOL
from .outage import database, is_database_down
from .render import json_response

log = logging.getLogger(__name__)


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    db = database(request.app)
    try:
        async with asyncio.timeout(2):
            await request.app[DB_POOL].fetchval("SELECT 1")
    except Exception as exc:  # any failure means "not ready"
        if is_database_down(exc) or isinstance(exc, TimeoutError):
            db.failed(exc)  # logs the start of the outage once, not at every probe
        else:
            log.warning("readiness check failed", exc_info=True)
        return json_response({"status": "unavailable"}, status=503)
    db.succeeded()
    return json_response({"status": "ok"})


def add_health_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
