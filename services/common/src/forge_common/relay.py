"""The outbox relay (docs/events.md): sends `core.outbox` rows to the gateway, signed, and deletes
them only after the gateway answered 2xx, so an event is never lost, only possibly sent twice
(the gateway stores each event id once).

Rows are claimed with FOR UPDATE SKIP LOCKED and a lease (their `next_attempt_at` moves forward),
so several replicas relay side by side and a crashed relay's rows come back when the lease ends.
While the gateway is unreachable the relay backs off and the rows wait in the outbox. An outage
of the gateway or of the database is logged once when it starts and once when it ends
(forge_common.outage), not at every round.

Wake-up: emit() NOTIFYs `outbox.NOTIFY_CHANNEL` at commit, and the relay subscribes to it on the
application's shared `Notifications` (one LISTEN connection per process), so an event leaves at
once. Polling stays as the fallback: while delivery is not proven (connection refused, dropped, a
proxy that does not pass notifications) the relay still finds every row on its next poll.

Each request is signed (forge_common.event_signature).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import asyncpg
from aiohttp import web
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from . import tasks
from .backoff import Backoff
from .config import Settings
from .event_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from .keys import DB_POOL, NOTIFICATIONS, SETTINGS
from .metrics import METRICS, counter, gauge
from .notifications import NotificationOptions, Notifications
from .outage import DATABASE, Dependency, database, round_failed
from .outbox import NOTIFY_CHANNEL
from .render import dumps

log = logging.getLogger(__name__)

EVENTS_PATH = "internal/v1/events"


def envelope(row: Mapping[str, Any]) -> dict[str, Any]:
    """The wire form of one outbox row (docs/events.md); `occurred_at` keeps microseconds."""
    occurred: datetime = row["occurred_at"]
    return {
        "id": str(row["id"]),
        "type": row["type"],
        "occurred_at": occurred.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "source": row["source"],
        "repo_id": row["repo_id"],
        "org_id": row["org_id"],
        "actor_id": row["actor_id"],
        "payload": row["payload"],
    }


@dataclass(frozen=True, slots=True)
class RelayOptions:
    # The gateway takes up to 500 events a request (docs/events.md "Ingest at the gateway").
    batch_size: int = 500
    # Rounds (claim, POST, delete) running at once: while one waits for the gateway to store its
    # batch, the others are claimed and sent. One or two at a time, the backlog left by an
    # overload reached the gateway at 560-1,370 events/s on a busy 2-core host, each round a chain
    # of waits for CPU; four at once, it stopped bounding the drain (docs/events.md "The relay").
    concurrency: int = 4
    # NOTIFY wakes the relay when an event commits; polling only covers what NOTIFY cannot (a
    # LISTEN connection being re-established, leases that expired, released retries), so once a
    # second bounds the latency of those rare cases while an idle replica queries 1/s, not 4/s.
    poll_interval: float = 1.0
    lease_seconds: float = 30.0
    request_timeout: float = 10.0
    backoff_initial: float = 0.5
    backoff_max: float = 60.0
    # While backing off, the gateway's /readyz is asked this often: once it answers 200 the wait
    # is cut short, so events flow within about this long of the gateway's return.
    probe_interval: float = 0.5
    # Only for a relay given no shared Notifications, which then opens one of its own.
    listen: NotificationOptions = field(default_factory=NotificationOptions)


# The relay's own bookkeeping (a claim's lease, the rows deleted after the gateway's 2xx) commits
# without waiting for the WAL flush: if PostgreSQL crashes, what it loses is only rows that are due
# again or back, so sent again, and the gateway stores each event once; a busy disk then costs the
# relay no wait for two of its three commits a batch (docs/events.md "The relay").
# Its statements are also planned for each batch's own arguments: prepared once per connection,
# PostgreSQL would soon keep one generic plan made while the outbox was nearly empty, a scan and
# sort of the whole outbox for every claim (10-30 ms each once a backlog of 20,000 waited).
RELAY_TRANSACTION = (
    "SET LOCAL synchronous_commit = off; SET LOCAL plan_cache_mode = force_custom_plan"
)


async def delete_sent(pool: asyncpg.Pool, ids: Sequence[Any]) -> None:
    """Delete the rows the gateway acknowledged."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(RELAY_TRANSACTION)
        await conn.execute("DELETE FROM core.outbox WHERE id = ANY($1::uuid[])", ids)


# Lease up to $1 due rows for $2 seconds, longest due first (for a new row: oldest first), along
# the (next_attempt_at, occurred_at) index without sorting the backlog; other relays skip them until
# the lease ends.
CLAIM = """WITH due AS (
               SELECT id FROM core.outbox
                WHERE next_attempt_at <= now()
                ORDER BY next_attempt_at, occurred_at
                LIMIT $1
                FOR UPDATE SKIP LOCKED)
           UPDATE core.outbox o
              SET next_attempt_at = now() + make_interval(secs => $2),
                  attempts = o.attempts + 1
            WHERE o.id = ANY(ARRAY(SELECT id FROM due))
           RETURNING o.id, o.type, o.occurred_at, o.source, o.repo_id, o.org_id,
                     o.actor_id, o.payload"""


async def claim(pool: asyncpg.Pool, limit: int, lease_seconds: float) -> list[asyncpg.Record]:
    """Lease up to `limit` due rows (CLAIM), in the order they are sent."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(RELAY_TRANSACTION)
        rows: list[asyncpg.Record] = await conn.fetch(CLAIM, limit, lease_seconds)
    return sorted(rows, key=lambda r: (r["occurred_at"], r["id"]))


class OutboxRelay:
    """One relay loop: claim, POST, delete on 2xx; back off while the gateway fails."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        settings: Settings,
        session: aiohttp.ClientSession,
        options: RelayOptions | None = None,
        *,
        notifications: Notifications | None = None,
        listen_dsn: str | None = None,
        database: Dependency | None = None,
    ) -> None:
        """NOTIFY arrives through `notifications` (the application's); without it the relay runs
        one of its own on `listen_dsn` (default: the settings' database) while it runs.
        `database` tracks the database's outages (the application's, so one is logged once)."""
        if not settings.gateway_url:
            raise ValueError("the relay needs GATEWAY_URL")
        if notifications is not None and listen_dsn is not None:
            raise ValueError("listen_dsn is for a relay without shared notifications")
        self._pool = pool
        self._url = settings.gateway_url.rstrip("/") + "/" + EVENTS_PATH
        self._ready_url = settings.gateway_url.rstrip("/") + "/readyz"
        self._secret = settings.events_secret
        self._session = session
        self.options = options or RelayOptions()
        self._backoff = Backoff(self.options.backoff_initial, self.options.backoff_max, jitter=0.2)
        self._notifications = notifications
        self._listen_dsn = listen_dsn or settings.database_url
        self._wake = asyncio.Event()
        self._backlog = asyncio.Event()  # the last claim found a full batch: more are waiting
        self.listening = asyncio.Event()  # set while NOTIFY is known to reach the relay
        self.database = database or Dependency(DATABASE)
        self.gateway = Dependency("gateway", consequence="events wait in the outbox meanwhile")
        # Read at scrape time (RelayCollector): events the gateway accepted, batches it did not.
        self.sent = 0
        self.failures = 0

    async def run(self) -> None:
        """Relay until cancelled, woken by NOTIFY or else every `poll_interval` seconds. While
        rounds find full batches (a backlog), `concurrency` - 1 more rounds run beside the first
        (rows are claimed with SKIP LOCKED: each its own); otherwise only the first one does, so
        a quiet outbox costs one claim per wake-up."""
        helpers = [self._help() for _ in range(self.options.concurrency - 1)]
        async with self._woken_by_notify():
            await asyncio.gather(self._poll(), *helpers)

    async def _help(self) -> None:
        """A round beside the first one's, while there is a backlog."""
        while True:
            await self._backlog.wait()
            try:
                await self.relay_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the first round reports and polls; this one waits for it
                self._backlog.clear()
                round_failed(self.database, exc, "outbox relay round failed")

    @contextlib.asynccontextmanager
    async def _woken_by_notify(self) -> AsyncIterator[None]:
        shared = self._notifications
        notifications = shared or Notifications(self._listen_dsn, self.options.listen)
        subscription = await notifications.subscribe(
            NOTIFY_CHANNEL, self._notified, on_state=self._listening_changed
        )
        if shared is None:
            notifications.start()
        try:
            yield
        finally:
            if shared is None:
                await notifications.stop()
            else:
                await shared.unsubscribe(subscription)

    async def _poll(self) -> None:
        while True:
            # Cleared before claiming: a NOTIFY arriving during the round starts another one.
            self._wake.clear()
            try:
                sent = await self.relay_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database may be restarting: keep going
                round_failed(self.database, exc, "outbox relay round failed")
                sent = 0
            else:
                self.database.succeeded()
            if sent == 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.options.poll_interval):
                        await self._wake.wait()

    def _notified(self, _payload: str) -> None:
        self._wake.set()

    def _listening_changed(self, listening: bool) -> None:
        if listening:
            self.listening.set()
            self._wake.set()  # events committed while nobody listened: claim them now
        else:
            self.listening.clear()

    async def relay_once(self) -> int:
        """Send one batch; how many events the gateway acknowledged (0: none due, or failed)."""
        rows = await claim(self._pool, self.options.batch_size, self.options.lease_seconds)
        if len(rows) < self.options.batch_size:
            self._backlog.clear()
        else:
            self._backlog.set()
        if not rows:
            return 0
        sent, problem = await self._send(rows)
        if problem is None:
            self._backoff.reset()
            self.gateway.succeeded()
            return sent
        unsent = [r["id"] for r in rows][sent:]
        delay = self._backoff.next()
        self.failures += 1
        self.gateway.failed(problem)  # a warning when the outage starts, and when it ends
        log.debug(
            "outbox relay: %d event(s) not accepted by the gateway: %s; retrying in %.1f s",
            len(unsent),
            problem,
            delay,
        )
        await self._release(unsent, delay)
        if await self._gateway_back_within(delay):
            await self._release(unsent, 0.0)  # due now: the next round sends them
        return sent

    async def _gateway_back_within(self, seconds: float) -> bool:
        """Wait up to `seconds`, asking the gateway's /readyz every `probe_interval`; True as
        soon as it answers 200 (the wait is cut short), False when the time is up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0:
            await asyncio.sleep(min(self.options.probe_interval, left))
            if loop.time() >= deadline:
                return False
            try:
                async with self._session.get(
                    self._ready_url,
                    timeout=aiohttp.ClientTimeout(total=self.options.probe_interval),
                ) as response:
                    if response.status == 200:
                        return True
            except (aiohttp.ClientError, TimeoutError):
                pass
        return False

    async def _send(self, rows: Sequence[asyncpg.Record]) -> tuple[int, str | None]:
        """POST `rows` in order, deleting each acknowledged batch; a batch over the gateway's
        body limit (413) is sent again in halves. Returns (rows sent, problem or None)."""
        body = dumps({"events": [envelope(dict(r)) for r in rows]})
        status, problem = await self._post(body)
        if status == 413 and len(rows) > 1:
            half = len(rows) // 2
            first, problem = await self._send(rows[:half])
            if problem is not None:
                return first, problem
            second, problem = await self._send(rows[half:])
            return first + second, problem
        if problem is not None:
            return 0, problem
        ids = [r["id"] for r in rows]
        await delete_sent(self._pool, ids)
        self.sent += len(ids)
        return len(ids), None

    async def _post(self, body: bytes) -> tuple[int | None, str | None]:
        """(HTTP status or None, problem or None when the gateway answered 2xx)."""
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: sign(self._secret, timestamp, body),
        }
        try:
            async with self._session.post(
                self._url,
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.options.request_timeout),
            ) as response:
                if 200 <= response.status < 300:
                    return response.status, None
                return response.status, f"HTTP {response.status}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            return None, f"{type(exc).__name__}: {exc}"

    async def _release(self, ids: Sequence[Any], delay: float) -> None:
        """Back in the queue after `delay`, keeping their order (occurred_at is unchanged)."""
        await self._pool.execute(
            """UPDATE core.outbox SET next_attempt_at = now() + make_interval(secs => $2)
                WHERE id = ANY($1::uuid[])""",
            ids,
            delay,
        )


async def relay_context(app: web.Application) -> AsyncIterator[None]:
    """Cleanup context: relays while the application runs (only when GATEWAY_URL is set)."""
    settings = app[SETTINGS]
    if not settings.gateway_url:
        yield
        return
    async with aiohttp.ClientSession() as session:
        relay = OutboxRelay(
            app[DB_POOL],
            settings,
            session,
            notifications=app[NOTIFICATIONS],
            database=database(app),
        )
        app[METRICS].add_collector(RelayCollector(relay))
        task = asyncio.create_task(relay.run(), name="outbox-relay")
        try:
            yield
        finally:
            await tasks.stop(task)


class RelayCollector(Collector):
    """The relay's counts, read at scrape time (docs/operations.md "Metrics")."""

    def __init__(self, relay: OutboxRelay) -> None:
        self._relay = relay

    def collect(self) -> Iterator[Metric]:
        relay = self._relay
        yield counter("forge_relay_events_sent", "Outbox events the gateway accepted", relay.sent)
        yield counter(
            "forge_relay_failures", "Batches the gateway did not accept (retried)", relay.failures
        )
        yield gauge(
            "forge_relay_gateway_up",
            "1 while the gateway accepts the relay's events",
            1 if relay.gateway.available else 0,
        )
