"""The LISTEN connection that keeps every replica's cache (cache.py) true.

One dedicated connection (not from the pool) listens on `forge_releases`. The cache is enabled
only while notifications are known to arrive: after LISTEN, and then every `ping_interval`
seconds, the listener NOTIFYs a probe of its own and must hear it back within `ping_timeout`, so a
dead connection, or a proxy that accepts LISTEN but never delivers (pgbouncer in transaction
mode), turns the cache off instead of leaving it stale. A lost connection disables the cache at
once (requests then query the database); reconnection uses a capped backoff, and each
(re)connection starts with an empty cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass
from typing import Any

import asyncpg

from .cache import ReleaseCache

log = logging.getLogger(__name__)

CHANNEL = "forge_releases"
PROBE_PREFIX = "probe:"


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
        self._probe = ""
        self._echo = asyncio.Event()

    def _on_notify(self, conn: object, pid: int, channel: str, payload: object) -> None:
        text = str(payload)
        if text.startswith(PROBE_PREFIX):  # every replica's probes reach every replica
            if text == self._probe:
                self._echo.set()
            return
        self.cache.on_notification(text)

    async def _round_trip(self, conn: asyncpg.Connection[Any]) -> None:
        """NOTIFY a fresh probe and wait to receive it: proof that notifications arrive."""
        self._probe = f"{PROBE_PREFIX}{secrets.token_hex(8)}"
        self._echo.clear()
        async with asyncio.timeout(self.tuning.ping_timeout):
            await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, self._probe)
            await self._echo.wait()

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
        await self._round_trip(conn)
        # Only now are changes seen; anything cached before may have missed some.
        self.cache.reset(enabled=True)
        self.connected.set()
        log.info("release cache listener connected")
        while not lost.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lost.wait(), self.tuning.ping_interval)
                break
            await self._round_trip(conn)
        raise ConnectionError("LISTEN connection lost")

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            conn.terminate()
