"""Outcomes of OnEvent calls, recorded in batches: one statement for whatever finished meanwhile
(docs/events.md "Drain"), kept and tried again while the database is out of reach."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import asyncpg
from forge_common.backoff import Backoff
from forge_common.outage import is_database_down

from ..options import DeliveryOptions
from . import queries
from .models import Outcome


class OutcomeRecorder:
    """Outcomes waiting to be recorded for the delivery worker `owner`. `failed` is told of a
    statement that failed, `succeeded` of one that ran, `recorded` after every statement (calls
    held back by `waiting` may start)."""

    def __init__(
        self,
        options: DeliveryOptions,
        owner: str,
        *,
        failed: Callable[[Exception, str], Awaitable[None]],
        succeeded: Callable[[], None],
        recorded: Callable[[], None],
    ) -> None:
        self.options = options
        self.owner = owner
        self.pool: asyncpg.Pool
        self._failed = failed
        self._succeeded = succeeded
        self._recorded = recorded
        self._outcomes: list[tuple[Outcome, asyncio.Future[bool]]] = []
        self._recording = 0  # outcomes in the statement running now
        self._ready = asyncio.Event()
        self._full = asyncio.Event()  # `outcome_batch` reached: record without waiting

    def waiting(self) -> int:
        """Outcomes not recorded yet (the worker's `unrecorded`)."""
        return len(self._outcomes) + self._recording

    def add(self, outcome: Outcome) -> asyncio.Future[bool]:
        """Queue `outcome`; the future says, once it is recorded, whether the lease was still
        ours (False: lost before recording)."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._outcomes.append((outcome, done))
        self._ready.set()
        if len(self._outcomes) >= self.options.outcome_batch:
            self._full.set()
        return done

    async def run(self) -> None:
        """Record outcomes in batches: after the first one, whatever finishes within
        `outcome_linger` (or while the last statement ran) goes in the same statement, so a busy
        plugin costs one statement per batch. A batch that could not be recorded is kept and tried
        again: its deliveries stay held, so the heartbeat keeps their leases."""
        linger, most = self.options.outcome_linger, self.options.outcome_batch
        backoff = Backoff(self.options.outcome_retry_initial, self.options.outcome_retry_max)
        while True:
            await self._ready.wait()
            if linger > 0 and len(self._outcomes) < most:
                self._full.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(linger):
                        await self._full.wait()
            if await self.flush(keep_on_failure=True):
                backoff.reset()
            else:
                await asyncio.sleep(backoff.next())

    async def drain(self) -> None:
        """Record what waits, batch after batch, until a statement fails or nothing is left
        (a stopping worker's last outcomes)."""
        while self._outcomes and await self.flush():
            pass

    async def flush(self, *, keep_on_failure: bool = False) -> bool:
        """Record up to `outcome_batch` of the outcomes waiting (the rest go in the next
        statement: a bounded statement has a bounded duration); False when the statement
        failed. Then they are put back (`keep_on_failure`), or their callers get the error."""
        most = self.options.outcome_batch
        batch, self._outcomes = self._outcomes[:most], self._outcomes[most:]
        if not self._outcomes:
            self._ready.clear()
        if not batch:
            return True
        self._recording = len(batch)
        try:
            kept = await queries.finish_many(self.pool, self.owner, [o for o, _ in batch])
        except Exception as error:
            await self._failed(error, "delivery worker: recording outcomes failed")
            # Only a database out of reach is worth waiting for; a statement it refused (a bug,
            # a value it cannot store) would fail again, and hold every later outcome with it.
            if keep_on_failure and is_database_down(error):
                self._outcomes[:0] = batch
                self._ready.set()
                return False
            for _, done in batch:
                if not done.done():
                    done.set_exception(error)
            return False
        finally:
            self._recording = 0
            self._recorded()
        self._succeeded()
        for outcome, done in batch:
            if not done.done():
                done.set_result(outcome.delivery.id in kept)
        return True
