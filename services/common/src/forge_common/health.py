"""Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers and
its schema is at the version the code expects), and the 503 a request gets instead of a 500 when
the database is down or not migrated yet (docs/architecture.md "Health")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import asyncpg
from aiohttp import web

from .keys import DB_POOL
from .migrations import Migration, pending
from .outage import (
    OUTAGES,
    Dependency,
    DependencyDown,
    database,
    is_database_down,
    is_schema_behind,
)
from .render import json_response

log = logging.getLogger(__name__)

SCHEMA = "schema"
NOT_MIGRATED = "The database is not migrated yet; try again later"


class ExpectedSchema:
    """The migrations this process's code expects; once they are all applied it stays so (the
    schema only moves forward), so a ready process's probe costs no query more."""

    def __init__(self, migrations: Sequence[Migration]) -> None:
        self.migrations = list(migrations)
        self.migrated = False

    async def missing(self, pool: asyncpg.Pool) -> list[Migration]:
        if self.migrated:
            return []
        missing = await pending(pool, self.migrations)
        self.migrated = not missing
        return missing


EXPECTED_SCHEMA = web.AppKey("expected_schema", ExpectedSchema)


def schema(app: web.Application) -> Dependency:
    """The schema as a dependency: logged once when a request finds it behind, probed until the
    migrations are in."""
    found = app[OUTAGES].dependency(
        SCHEMA, consequence="answering 503 (not migrated) until `forge db migrate` has run"
    )
    if found.probe is None and DB_POOL in app:
        expected, pool = app[EXPECTED_SCHEMA], app[DB_POOL]

        async def probe() -> None:
            if await expected.missing(pool):
                raise RuntimeError("migrations pending")

        found.probe = probe
    return found


def unavailable(app: web.Application, exc: BaseException) -> DependencyDown | None:
    """The 503 to answer for `exc` when it says the database is down or not migrated, else
    None (a bug: the caller lets it be a 500)."""
    if is_database_down(exc):
        return database(app).failed(exc)
    # once the schema is known to be at the code's version, a missing relation is a bug: a 500
    if is_schema_behind(exc) and not app[EXPECTED_SCHEMA].migrated:
        return schema(app).failed(exc, NOT_MIGRATED)
    return None


async def healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    db = database(request.app)
    try:
        async with asyncio.timeout(2):
            await request.app[DB_POOL].fetchval("SELECT 1")
            missing = await request.app[EXPECTED_SCHEMA].missing(request.app[DB_POOL])
    except Exception as exc:  # any failure means "not ready"
        if is_database_down(exc) or isinstance(exc, TimeoutError):
            db.failed(exc)  # logs the start of the outage once, not at every probe
        else:
            log.warning("readiness check failed", exc_info=True)
        return _not_ready("database unavailable")
    db.succeeded()
    if missing:
        first = missing[0]
        return _not_ready(
            f"database not migrated: {len(missing)} migration(s) pending, the first "
            f"{first.schema}/{first.version:04d}_{first.name}; run `forge db migrate`"
        )
    schema(request.app).succeeded()
    return json_response({"status": "ok"})


def _not_ready(reason: str) -> web.Response:
    return json_response(
        {"status": "unavailable", "reason": reason}, status=503, headers={"Retry-After": "5"}
    )


def add_health_routes(app: web.Application, migrations: Sequence[Migration]) -> None:
    app[EXPECTED_SCHEMA] = ExpectedSchema(migrations)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
