"""Retention of the audit log (docs/audit.md "Retention"): every hour, entries older than
AUDIT_RETENTION_DAYS are deleted whole. Each replica runs it; a DELETE that finds nothing is
cheap, and two at once delete each row once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
from aiohttp import web
from forge_common import tasks
from forge_common.audit import queries
from forge_common.keys import DB_POOL, SETTINGS

from ..keys import AUDIT_PRUNING, OPTIONS

log = logging.getLogger(__name__)


async def prune(app: web.Application) -> int:
    keep = timedelta(days=app[SETTINGS].audit_retention_days)
    return await queries.delete_older_than(app[DB_POOL], datetime.now(UTC) - keep)


async def _prune_forever(app: web.Application) -> None:
    while True:
        try:
            await prune(app)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("could not prune the audit log yet: %s", exc)
        await asyncio.sleep(app[OPTIONS].insights_prune_interval)


async def audit_retention_context(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.create_task(_prune_forever(app), name="releases-audit-retention")
    app[AUDIT_PRUNING] = task
    yield
    await tasks.stop(task)
