"""The LISTEN connection that keeps every replica's cache (cache.py) true.

One dedicated connection (not from the pool) listens on `forge_releases`. The cache is enabled
only while it is up and known to be alive: a lost connection disables the cache at once (requests
then query the database), a ping every `ping_interval` seconds catches a connection that died
silently, and reconnection uses a capped backoff. Each (re)connection starts with an empty cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import asyncpg

from .cache import ReleaseCache

log = logging.getLogger(__name__)

CHANNEL = "forge_releases"


@dataclass(frozen=True, slots=True)
class ListenerTuning:
    ping_interval: float = 5.0
    ping_timeout: float = 2.0
    connect_timeout: float = 5.0
    first_backoff: float = 0.2
    max_backoff: float = 10.0


class ChangeListener:
    def __init__(self, dsn: str, cache: ReleaseCache, tuning: ListenerTuning) -> None:
        self.dsn = dsn
        self.cache = cache
        self.tuning = tuning
        self.connected = asyncio.Event()  # set while notifications are being received
        self._conn: asyncpg.Connection[Any] | None = None

    def _on_notify(self, conn: object, pid: int, channel: str, payload: object) -> None:
        self.cache.on_notification(str(payload))

    async def run(self) -> None:
        """Listen forever; cancel the task to stop."""
        backoff = self.tuning.first_backoff
        while True:
            try:
                await self._listen_once()
                backoff = self.tuning.first_backoff  # it worked for a while: retry quickly
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure only means: reconnect later
                log.warning("release cache listener failed (%s); cache off until reconnected", exc)
            finally:
                self.connected.clear()
                self.cache.reset(enabled=False)
                await self._close()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.tuning.max_backoff)

    async def _listen_once(self) -> None:
        lost = asyncio.Event()
        conn = await asyncpg.connect(self.dsn, timeout=self.tuning.connect_timeout)
        self._conn = conn
        conn.add_termination_listener(lambda _conn: lost.set())
        await conn.add_listener(CHANNEL, self._on_notify)
        # Only now are changes seen; anything cached before may have missed some.
        self.cache.reset(enabled=True)
        self.connected.set()
        log.info("release cache listener connected")
        while not lost.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lost.wait(), self.tuning.ping_interval)
                break
            await asyncio.wait_for(conn.fetchval("SELECT 1"), self.tuning.ping_timeout)
        raise ConnectionError("LISTEN connection lost")

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()
