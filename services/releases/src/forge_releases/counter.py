"""Download counting: increments gathered in memory and written in batches.

A completed full download calls `add`; `flush` writes every pending increment in one statement.
The app flushes every `Options.counter_flush_interval` seconds and once more at clean shutdown,
after the server stopped taking requests, so no count is lost then. A failed write keeps its
increments for the next flush. The API adds `pending` to the stored count, so a caller sees its
own download at once.

A stored count read while a flush is writing could be from before or after its commit, while
`pending` no longer holds the batch: the sum would dip (1, 2, 1) or count the batch twice. So
every read of stored counts goes through `consistent`, which waits for a running flush and reads
again when one started meanwhile (docs/releases.md "Downloads").
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

log = logging.getLogger(__name__)

T = TypeVar("T")


class DownloadCounter:
    def __init__(self) -> None:
        self._pending: Counter[int] = Counter()
        self._lock = asyncio.Lock()
        self._flushes = 0  # flushes started: a read that saw this number change reads again
        self._idle = asyncio.Event()  # set while no flush is writing
        self._idle.set()
        # Read at scrape time (forge_releases/metrics.py): full downloads and bytes sent (any).
        self.completed = 0
        self.bytes_sent = 0
        self.bytes_zero_copy = 0  # of bytes_sent: by the kernel's sendfile (downloads/zerocopy.py)

    def add(self, asset_id: int) -> None:
        self._pending[asset_id] += 1
        self.completed += 1

    def sent(self, size: int, *, zero_copy: bool = False) -> None:
        self.bytes_sent += size
        if zero_copy:
            self.bytes_zero_copy += size

    def pending(self, asset_id: int) -> int:
        return self._pending.get(asset_id, 0)

    async def consistent(self, read: Callable[[], Awaitable[T]]) -> T:
        """`read()` (a query of stored counts) at a moment no flush was writing, so that its
        counts plus `pending`, taken with no await after it returns, are each download once."""
        while True:
            await self._idle.wait()
            started = self._flushes
            result = await read()
            if started == self._flushes and self._idle.is_set():
                return result

    async def flush(self, pool: asyncpg.Pool) -> int:
        """Write pending increments; returns how many downloads were written."""
        async with self._lock:
            batch = self._pending
            if not batch:
                return 0
            self._pending = Counter()
            self._flushes += 1
            self._idle.clear()
            ids, counts = list(batch), list(batch.values())
            try:
                await pool.execute(
                    """UPDATE releases.assets a SET download_count = a.download_count + v.n
                         FROM unnest($1::bigint[], $2::bigint[]) AS v(id, n)
                        WHERE a.id = v.id""",
                    ids,
                    counts,
                )
            except BaseException:
                self._pending.update(batch)  # try again next time
                raise
            finally:
                self._idle.set()
            return sum(counts)

    async def run(self, pool: asyncpg.Pool, interval: float) -> None:
        """Flush every `interval` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            try:
                # shielded: stopping the app must not cut a write whose outcome is then unknown
                # (it could be applied and retried: counted twice); the final flush waits for it
                await asyncio.shield(self.flush(pool))
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("could not write download counts yet: %s", exc)
