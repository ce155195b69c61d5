"""One LISTEN connection per process, shared by every subscriber, that proves notifications
really arrive and says when they stop, so subscribers fall back to polling meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import asyncpg

from . import tasks
from .backoff import Backoff

log = logging.getLogger(__name__)

# How the session shows in pg_stat_activity, for operators (and tests) looking for it.
APPLICATION_NAME = "forge-notifications"
# Replicas that lost the database together should not all knock at once when it returns.
RECONNECT_JITTER = 0.2
MAX_CHANNEL_BYTES = 63  # NAMEDATALEN - 1

Callback = Callable[[str], None]  # the payload
StateCallback = Callable[[bool], None]  # listening (delivery proven) or not


@dataclass(frozen=True, slots=True)
class NotificationOptions:
    # Also the longest a deaf connection goes unnoticed (plus probe_timeout).
    probe_interval: float = 5.0
    # How long a round trip may take: the probe's echo, a LISTEN on the live connection.
    probe_timeout: float = 2.0
    connect_timeout: float = 5.0
    backoff_initial: float = 0.2
    backoff_max: float = 10.0
    close_timeout: float = 2.0
    probe_channel: str = "forge_probe"


class Subscription:
    """One subscriber of one channel; give it back to `Notifications.unsubscribe`."""

    __slots__ = ("_listening", "callback", "channel", "on_state")

    def __init__(self, channel: str, callback: Callback, on_state: StateCallback | None) -> None:
        self.channel = channel
        self.callback = callback
        self.on_state = on_state
        self._listening = False

    @property
    def listening(self) -> bool:
        """What this subscriber was last told: its notifications are known to arrive."""
        return self._listening


class Notifications:
    """Subscribe to channels by name; callbacks run for each NOTIFY while the connection lives.

    The connection is dedicated (never from the pool, which would hand it to someone else). After
    connecting, and then every `probe_interval`, it NOTIFYs a random payload on a probe channel of
    its own and must hear it back within `probe_timeout`: a dead connection, or a proxy that
    accepts LISTEN but never delivers (pgbouncer in transaction mode), is noticed, not trusted.
    Any failure (refused, lost, probe unanswered) closes it and reconnects with a capped backoff.

    Notifications sent while it is down are lost for good: a subscriber told `listening=False`
    must not rely on them until told True again, and must then assume it missed some (empty its
    cache, poll once).

    `callback(payload)` and `on_state(listening)` are plain functions, called on the event loop
    from the connection's notification callback (or from this object's task for `on_state`):
    they must be quick and must not block; to do real work, set an event or start a task.
    `on_state` is called on changes only (a new subscriber starts as not listening), with True
    once the channel is LISTENed on a connection whose delivery is proven, False when it is lost.

    `listening` is set while delivery is proven: read it or wait on it, never set it. It is the
    process-wide view; a subscriber's own `on_state` is the one to act on (a subscriber whose
    LISTEN failed stays off, while the others are on, until the connection is replaced).
    The connection opens once something subscribes, and stays open until `stop()`.
    """

    def __init__(self, dsn: str, options: NotificationOptions | None = None) -> None:
        self.dsn = dsn
        self.options = options or NotificationOptions()
        self.listening = asyncio.Event()
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._wanted = asyncio.Event()
        self._conn: asyncpg.Connection[Any] | None = None
        self._listened: set[str] = set()  # channels LISTENed on self._conn
        # asyncpg runs one statement at a time per connection: the probe, the task's LISTENs and
        # subscribe()'s LISTEN take turns.
        self._lock = asyncio.Lock()
        self._probe = ""
        self._echo = asyncio.Event()
        self._backoff = Backoff(
            self.options.backoff_initial, self.options.backoff_max, jitter=RECONNECT_JITTER
        )
        self._task: asyncio.Task[None] | None = None

    @property
    def server_pid(self) -> int | None:
        """The PostgreSQL backend of the current connection, if any (diagnostics, tests)."""
        conn = self._conn
        return None if conn is None or conn.is_closed() else conn.get_server_pid()

    def start(self) -> None:
        """Run in the background until `stop()`; a failed connection is retried, never raised."""
        if self._task is None or self._task.done():
            self._backoff.reset()
            self._task = asyncio.create_task(self._run(), name="forge-notifications")

    async def stop(self) -> None:
        """Stop listening and close the connection (within `close_timeout`, else drop it)."""
        task, self._task = self._task, None
        if task is None:
            return
        await tasks.stop(task)

    async def subscribe(
        self, channel: str, callback: Callback, *, on_state: StateCallback | None = None
    ) -> Subscription:
        """Call `callback(payload)` for each NOTIFY on `channel`; before or after `start()`.

        On a live connection the channel is LISTENed before this returns, and `on_state(True)` is
        called at once when delivery is already proven.
        """
        # PostgreSQL would cut a longer name, and notifications would come under the cut one.
        if not 0 < len(channel.encode()) <= MAX_CHANNEL_BYTES:
            raise ValueError(f"a channel name has 1 to {MAX_CHANNEL_BYTES} bytes: {channel!r}")
        if channel == self.options.probe_channel:
            raise ValueError(f"{channel!r} is the probe channel")
        subscription = Subscription(channel, callback, on_state)
        self._subscriptions.setdefault(channel, []).append(subscription)
        self._wanted.set()
        conn = None
        try:
            async with self._lock:
                conn = self._conn
                if conn is not None and channel not in self._listened:
                    async with asyncio.timeout(self.options.probe_timeout):
                        await conn.add_listener(channel, self._dispatch)
                    if self._conn is not conn:  # lost meanwhile: the next connection LISTENs
                        return subscription
                    self._listened.add(channel)
                if self.listening.is_set():
                    self._tell(subscription, True)
        except asyncio.CancelledError:
            self._forget(subscription)
            raise
        except Exception as error:
            # A connection that cannot LISTEN cannot be trusted: replace it. The new one LISTENs
            # every subscribed channel, this one included.
            log.warning("notifications: LISTEN %s failed (%s); reconnecting", channel, error)
            if conn is not None:
                conn.terminate()
        return subscription

    async def unsubscribe(self, subscription: Subscription) -> None:
        """No more callbacks for `subscription`; the last one of a channel UNLISTENs it."""
        channel = subscription.channel
        if not self._forget(subscription) or channel in self._subscriptions:
            return
        async with self._lock:
            conn = self._conn
            if conn is None or channel not in self._listened:
                return
            self._listened.discard(channel)
            # Failing here is harmless: asyncpg already dropped the callback, and a broken
            # connection is noticed and replaced by the task.
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.options.probe_timeout):
                    await conn.remove_listener(channel, self._dispatch)

    def _forget(self, subscription: Subscription) -> bool:
        subscriptions = self._subscriptions.get(subscription.channel, [])
        if subscription not in subscriptions:
            return False
        subscriptions.remove(subscription)
        if not subscriptions:
            del self._subscriptions[subscription.channel]
        return True

    def _dispatch(self, _conn: object, _pid: int, channel: str, payload: object) -> None:
        for subscription in list(self._subscriptions.get(channel, ())):
            try:
                subscription.callback(str(payload))
            except Exception:  # one broken subscriber must not starve the others
                log.exception("notifications: a subscriber of %s failed", channel)

    def _on_probe(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        if payload == self._probe:  # other processes' probes reach us too
            self._echo.set()

    def _tell(self, subscription: Subscription, listening: bool) -> None:
        if subscription.listening == listening:
            return
        subscription._listening = listening
        if subscription.on_state is None:
            return
        try:
            subscription.on_state(listening)
        except Exception:
            log.exception("notifications: a subscriber of %s failed", subscription.channel)

    def _set_listening(self, listening: bool) -> None:
        if listening:
            self.listening.set()
        else:
            self.listening.clear()
        for subscriptions in list(self._subscriptions.values()):
            for subscription in list(subscriptions):
                self._tell(subscription, listening)

    async def _run(self) -> None:
        while True:
            await self._wanted.wait()
            try:
                await self._listen()
            except Exception as error:
                problem = str(error) or type(error).__name__
            finally:
                await self._disconnect()
            delay = self._backoff.next()
            log.warning(
                "notifications: LISTEN failed (%s); subscribers poll until it is back, "
                "retrying in %.1f s",
                problem,
                delay,
            )
            await asyncio.sleep(delay)

    async def _listen(self) -> NoReturn:
        """Connect, prove delivery, LISTEN every channel, then probe until something fails."""
        lost = asyncio.Event()
        async with asyncio.timeout(self.options.connect_timeout):
            conn = await asyncpg.connect(
                self.dsn, server_settings={"application_name": APPLICATION_NAME}
            )
        # No await between connecting and this: a cancelled start cannot leak the connection.
        self._conn, self._listened = conn, set()
        conn.add_termination_listener(lambda _conn: lost.set())
        # Under the lock like every statement: a subscribe() that finds self._conn set already
        # may be LISTENing on it ("another operation is in progress" at `serve --all` start-up).
        async with self._lock, asyncio.timeout(self.options.connect_timeout):
            await conn.add_listener(self.options.probe_channel, self._on_probe)
        await self._prove(conn)
        async with self._lock, asyncio.timeout(self.options.connect_timeout):
            for channel in list(self._subscriptions):
                if channel not in self._listened:  # subscribe() may have been first
                    await conn.add_listener(channel, self._dispatch)
                    self._listened.add(channel)
            # Under the lock: a concurrent subscribe() sees either all of this or none of it.
            self._set_listening(True)
        self._backoff.reset()
        log.info("notifications: listening (%s)", ", ".join(sorted(self._listened)))
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.options.probe_interval):
                    await lost.wait()
            if lost.is_set():
                raise ConnectionError("connection lost")
            await self._prove(conn)

    async def _prove(self, conn: asyncpg.Connection[Any]) -> None:
        """NOTIFY a fresh payload on the probe channel and hear it back, or raise TimeoutError."""
        self._probe = secrets.token_hex(8)
        self._echo.clear()
        try:
            async with asyncio.timeout(self.options.probe_timeout):
                async with self._lock:
                    await self._send_probe(conn, self._probe)
                await self._echo.wait()
        except TimeoutError:
            raise TimeoutError(
                f"probe not heard back within {self.options.probe_timeout} s"
            ) from None

    async def _send_probe(self, conn: asyncpg.Connection[Any], payload: str) -> None:
        """A method of its own so a test can play a proxy that swallows notifications."""
        await conn.execute("SELECT pg_notify($1, $2)", self.options.probe_channel, payload)

    async def _disconnect(self) -> None:
        self._set_listening(False)
        conn, self._conn = self._conn, None
        if conn is None or conn.is_closed():
            return
        try:
            await conn.close(timeout=self.options.close_timeout)
        except Exception:  # shutdown never hangs on a database that does not answer
            conn.terminate()
