"""Removing blobs no asset references any more (`forge storage sweep`, a Kubernetes CronJob).

Deleting an asset already deletes its blob when nothing else references it (publish/writes.py
collect_garbage); the sweep catches what that best-effort step missed (a crash, a store that was
down) and blobs copied in by `forge storage migrate` for assets deleted since.

Safe with several replicas and with uploads in flight: the digests are listed without a lock,
then each batch is checked and deleted under the same transaction-scoped advisory lock
(publish/queries.lock_blobs) that an upload holds from the moment its blob reaches its address
until its asset row is committed. An upload's bytes are in `incoming/` until then, which the sweep
never lists; so a blob at its address either has its row, or is deleted under the lock before the
upload can commit — and the upload then writes it again.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
from forge_common.db import transaction

from ..publish.queries import lock_blobs, unreferenced_blobs
from .base import Storage

BATCH = 500


@dataclass(slots=True)
class SweepReport:
    checked: int = 0
    deleted: int = 0


async def sweep(storage: Storage, pool: asyncpg.Pool, *, batch: int = BATCH) -> SweepReport:
    report = SweepReport()
    pending: list[str] = []
    async for digest in storage.digests():
        pending.append(digest)
        if len(pending) >= batch:
            await _sweep_batch(storage, pool, pending, report)
            pending = []
    if pending:
        await _sweep_batch(storage, pool, pending, report)
    return report


async def _sweep_batch(
    storage: Storage, pool: asyncpg.Pool, digests: list[str], report: SweepReport
) -> None:
    async with transaction(pool) as conn:
        await lock_blobs(conn)
        for digest in await unreferenced_blobs(conn, digests):
            await storage.delete(digest)
            report.deleted += 1
    report.checked += len(digests)
