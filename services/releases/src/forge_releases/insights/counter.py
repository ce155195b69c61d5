"""Counting answers and downloads in memory, written in one statement every few seconds.

The hot path does one dict increment keyed by a tuple it already holds (`checked`): the
repository id, the key its answer is kept under and the answer's body (bytes cache their hash).
Everything else, turning keys into dimensions and time buckets into rows, happens at `flush`,
once per distinct key, every `Options.insights_flush_interval` seconds and once more at clean
shutdown. A failed write keeps its counts for the next flush; a crash loses at most one interval
(docs/insights.md "What a crash loses").

Counts are gathered per UTC hour: `run` closes the hour's counts when the clock passes the hour,
so a flush never mixes two hours (nor, therefore, two days).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime

import asyncpg

from . import queries
from .dimensions import Defaults, Dims, of_check, of_download, short_key

log = logging.getLogger(__name__)

HOUR = 3600
MAX_KEY = 256  # a longer key is cut to the parameters counted (`answered`)
CheckKey = tuple[int, str, bytes]  # repository id, kept-answer key, answer body
DownloadKey = tuple[int, int, str]  # repository id, release id, file name


class Hour:
    """The counts of one UTC hour, as gathered."""

    __slots__ = ("checks", "downloads", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.checks: defaultdict[CheckKey, int] = defaultdict(int)
        self.downloads: defaultdict[DownloadKey, int] = defaultdict(int)

    def __bool__(self) -> bool:
        return bool(self.checks or self.downloads)

    def merge(self, other: Hour) -> None:
        for key, n in other.checks.items():
            self.checks[key] += n
        for dkey, n in other.downloads.items():
            self.downloads[dkey] += n


def rows_of(hours: list[Hour], defaults: Defaults) -> list[queries.Row]:
    """One row per distinct (hour, repository, dimensions): each key parsed once here."""
    rows: defaultdict[tuple[datetime, int, int, Dims], int] = defaultdict(int)
    parsed: dict[tuple[str, bytes], Dims] = {}
    for hour in hours:
        at = datetime.fromtimestamp(hour.start, UTC)
        for (repo_id, key, body), n in hour.checks.items():
            dims = parsed.get((key, body))
            if dims is None:
                dims = parsed[(key, body)] = of_check(key, body, defaults)
            rows[(at, repo_id, 0, dims)] += n
        for (repo_id, release_id, name), n in hour.downloads.items():
            rows[(at, repo_id, release_id, of_download(name))] += n
    return [queries.Row(*key, n) for key, n in rows.items()]


class InsightsCounter:
    def __init__(self, defaults: Defaults, clock: Callable[[], float] = time.time) -> None:
        self._defaults = defaults
        self._clock = clock
        self._hour = Hour(self._hour_start())
        # the hot path's dict, bound once: `checked` is one increment
        self._checks = self._hour.checks
        self._closed: list[Hour] = []
        self._lock = asyncio.Lock()
        # totals for Prometheus (forge_releases/metrics.py): written ones, never per version
        self.checks_written = 0
        self.downloads_written = 0

    def _hour_start(self) -> int:
        now = int(self._clock())
        return now - now % HOUR

    def checked(self, repo_id: int, key: str, body: bytes) -> None:
        """One answered check or feed request: the answer kept under `key` with `body`."""
        self._checks[(repo_id, key, body)] += 1

    def answered(self, repo_id: int, key: str, body: bytes) -> None:
        """`checked` for an answer made (or found) the long way: a long key (junk parameters
        around the four the check reads) is cut down to those four first, so a flood of unique
        query strings cannot fill memory with them between two writes."""
        if len(key) > MAX_KEY and not key.startswith("feed "):
            key = short_key(key)
        self.checked(repo_id, key, body)

    def downloaded(self, repo_id: int, release_id: int, name: str) -> None:
        """One completed download of file `name` of release `release_id`."""
        self._hour.downloads[(repo_id, release_id, name)] += 1

    def pending(self) -> int:
        """Counts not yet written."""
        hours = [self._hour, *self._closed]
        return sum(sum(h.checks.values()) + sum(h.downloads.values()) for h in hours)

    def roll(self) -> None:
        """Close the current hour when the clock has left it (called by `run`)."""
        start = self._hour_start()
        if start != self._hour.start:
            self._close(start)

    def _close(self, start: int) -> None:
        if self._hour:
            self._closed.append(self._hour)
        self._hour = Hour(start)
        self._checks = self._hour.checks

    async def flush(self, pool: asyncpg.Pool) -> int:
        """Write every count gathered so far; returns how many were written."""
        async with self._lock:
            current = self._hour
            self._close(current.start)  # a fresh dict for the same hour: requests go on counting
            hours, self._closed = self._closed, []
            if not hours:
                return 0
            rows = rows_of(hours, self._defaults)
            try:
                await queries.add_counts(pool, rows)
            except BaseException:
                self._restore(hours)
                raise
            for row in rows:
                if row.dims.kind == "check":
                    self.checks_written += row.n
                else:
                    self.downloads_written += row.n
            return sum(row.n for row in rows)

    def _restore(self, hours: list[Hour]) -> None:
        """Put unwritten counts back, each under its own hour, for the next flush."""
        by_start = {h.start: h for h in self._closed}
        for hour in hours:
            if hour.start == self._hour.start:
                self._hour.merge(hour)
            elif hour.start in by_start:
                by_start[hour.start].merge(hour)
            else:
                self._closed.append(hour)
                by_start[hour.start] = hour
        self._closed.sort(key=lambda h: h.start)

    async def run(self, pool: asyncpg.Pool, interval: float) -> None:
        """Flush every `interval` seconds, and at every hour's end, until cancelled."""
        while True:
            now = self._clock()
            next_hour = now - now % HOUR + HOUR
            await asyncio.sleep(min(interval, max(next_hour - now, 0.0)))
            self.roll()
            try:
                # shielded, as the download counter's: a cut write could be applied and retried
                await asyncio.shield(self.flush(pool))
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("could not write insights counts yet: %s", exc)


class Uncounted(InsightsCounter):
    """`INSIGHTS=off`: the same calls, counting nothing."""

    def answered(self, repo_id: int, key: str, body: bytes) -> None:
        pass

    def checked(self, repo_id: int, key: str, body: bytes) -> None:
        pass

    def downloaded(self, repo_id: int, release_id: int, name: str) -> None:
        pass
