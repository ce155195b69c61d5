"""The shared LISTEN connection against a real PostgreSQL: delivery, several channels on one
connection, recovery from a killed session, a deaf connection caught by the probe, prompt stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import asyncpg
import pytest
from aiohttp.test_utils import TestServer
from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.keys import NOTIFICATIONS
from forge_common.notifications import APPLICATION_NAME, NotificationOptions, Notifications
from forge_testing.ports import free_port
from forge_testing.waiting import eventually

FAST = NotificationOptions(
    probe_interval=0.2,
    probe_timeout=0.5,
    connect_timeout=2.0,
    backoff_initial=0.05,
    backoff_max=0.2,
    close_timeout=1.0,
)


class Heard:
    """A subscriber's record: payloads received and listening states it was told."""

    def __init__(self) -> None:
        self.payloads: list[str] = []
        self.states: list[bool] = []

    def payload(self, payload: str) -> None:
        self.payloads.append(payload)

    def state(self, listening: bool) -> None:
        self.states.append(listening)


@contextlib.asynccontextmanager
async def running(notifications: Notifications) -> AsyncIterator[Notifications]:
    """Started, stopped at the end; the whole block bounded in time."""
    notifications.start()
    try:
        async with asyncio.timeout(10):
            yield notifications
    finally:
        await notifications.stop()


@contextlib.asynccontextmanager
async def listening(notifications: Notifications) -> AsyncIterator[Heard]:
    """Running with a subscriber of `forge_test_a`, from the moment delivery is proven."""
    heard = Heard()
    await notifications.subscribe("forge_test_a", heard.payload, on_state=heard.state)
    async with running(notifications):
        await notifications.listening.wait()
        yield heard


async def notify(db: Any, channel: str, payload: str) -> None:
    await db.execute("SELECT pg_notify($1, $2)", channel, payload)


async def sessions(db: Any) -> int:
    count: int = await db.fetchval(
        """SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1""",
        APPLICATION_NAME,
    )
    return count


async def test_a_notify_on_a_subscribed_channel_reaches_the_callback(
    database_url: str, db: Any
) -> None:
    async with listening(Notifications(database_url, FAST)) as heard:
        assert heard.states == [True]
        await notify(db, "forge_test_a", "hello")
        await eventually(lambda: heard.payloads == ["hello"])
    assert heard.states == [True, False]  # stop() says so too


async def test_a_subscribe_while_the_connection_starts_waits_its_turn(
    database_url: str, db: Any, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """`forge serve --all` at start-up: a service subscribes while the shared connection is still
    LISTENing on its probe channel. Two statements at once on one asyncpg connection fail with
    "another operation is in progress" (and the connection was replaced, with a warning); the
    subscribe waits its turn instead. The probe's LISTEN is held open until another LISTEN is
    tried on the connection, or for a second when none is (the fixed code's case)."""
    other_tried = asyncio.Event()

    class ProbeListenHeldOpen(asyncpg.Connection):  # a real connection, only slower to LISTEN
        async def add_listener(self, channel: str, callback: Any) -> None:
            if channel == FAST.probe_channel:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1):
                        await other_tried.wait()
            else:
                other_tried.set()
            await super().add_listener(channel, callback)

    real_connect = asyncpg.connect

    async def connect(*args: Any, **kwargs: Any) -> Any:
        return await real_connect(*args, connection_class=ProbeListenHeldOpen, **kwargs)

    monkeypatch.setattr(asyncpg, "connect", connect)
    caplog.set_level(logging.WARNING, "forge_common.notifications")
    notifications = Notifications(database_url, FAST)
    first, second = Heard(), Heard()
    await notifications.subscribe("forge_test_a", first.payload)  # what opens the connection
    async with running(notifications):
        await eventually(lambda: notifications.server_pid is not None)  # the probe's LISTEN
        await notifications.subscribe("forge_test_b", second.payload, on_state=second.state)
        await notifications.listening.wait()
        await notify(db, "forge_test_a", "to a")
        await notify(db, "forge_test_b", "to b")
        await eventually(lambda: first.payloads == ["to a"] and second.payloads == ["to b"])
    assert second.states == [True, False]
    assert "LISTEN" not in caplog.text, caplog.text  # no failed LISTEN, no reconnect


async def test_two_channels_and_two_subscribers_share_one_connection(
    database_url: str, db: Any
) -> None:
    notifications = Notifications(database_url, FAST)
    second, also_first = Heard(), Heard()
    async with listening(notifications) as first:
        # Subscribed on the live connection: LISTENed before subscribe() returns.
        await notifications.subscribe("forge_test_b", second.payload, on_state=second.state)
        assert second.states == [True]
        await notify(db, "forge_test_b", "to b")
        await notify(db, "forge_test_a", "to a")
        await eventually(lambda: first.payloads == ["to a"] and second.payloads == ["to b"])
        assert await sessions(db) == 1

        extra = await notifications.subscribe("forge_test_a", also_first.payload)
        await notify(db, "forge_test_a", "to both")
        await eventually(lambda: also_first.payloads == ["to both"])
        await eventually(lambda: first.payloads == ["to a", "to both"])
        await notifications.unsubscribe(extra)
        await notify(db, "forge_test_a", "to one")
        await eventually(lambda: first.payloads[-1] == "to one")
        assert also_first.payloads == ["to both"]
        assert second.payloads == ["to b"]


async def test_a_killed_connection_comes_back_by_itself(database_url: str, db: Any) -> None:
    notifications = Notifications(database_url, FAST)
    async with listening(notifications) as heard:
        pid = notifications.server_pid
        assert await db.fetchval("SELECT pg_terminate_backend($1)", pid)
        await eventually(lambda: len(heard.states) == 3)  # off, then on again
        assert heard.states == [True, False, True]
        assert notifications.listening.is_set()
        assert notifications.server_pid not in (None, pid)
        await notify(db, "forge_test_a", "again")
        await eventually(lambda: heard.payloads == ["again"])
        assert await sessions(db) == 1


class Deaf(Notifications):
    """Plays a proxy that accepts LISTEN but delivers nothing: the probe is sent nowhere."""

    deaf = False

    async def _send_probe(self, conn: asyncpg.Connection[Any], payload: str) -> None:
        if not self.deaf:
            await super()._send_probe(conn, payload)


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_an_unanswered_probe_turns_listening_off_until_a_new_connection_answers(
    database_url: str, db: Any
) -> None:
    notifications = Deaf(database_url, FAST)
    async with listening(notifications) as heard:
        pid = notifications.server_pid
        notifications.deaf = True
        started = time.monotonic()
        await eventually(lambda: not notifications.listening.is_set())
        # noticed at the next probe: within probe_interval + probe_timeout (and some slack)
        assert time.monotonic() - started < FAST.probe_interval + FAST.probe_timeout + 1.0
        assert heard.states == [True, False]
        await asyncio.sleep(FAST.probe_timeout)  # still deaf: no connection is trusted
        assert not notifications.listening.is_set()
        notifications.deaf = False
        await notifications.listening.wait()
        assert heard.states == [True, False, True]
        assert notifications.server_pid != pid  # the deaf connection was replaced
        assert await sessions(db) == 1


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_an_unreachable_database_is_retried_with_backoff_and_stop_is_prompt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    nowhere = f"postgresql://forge@127.0.0.1:{free_port()}/forge"
    notifications = Notifications(nowhere, FAST)
    heard = Heard()
    with caplog.at_level(logging.WARNING, logger="forge_common.notifications"):
        async with running(notifications):
            await notifications.subscribe("forge_test_a", heard.payload, on_state=heard.state)
            await eventually(lambda: caplog.text.count("LISTEN failed") >= 3)
            assert not notifications.listening.is_set()
            started = time.monotonic()
            await notifications.stop()
            assert time.monotonic() - started < 0.5
    assert heard.states == []


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_stop_closes_the_connection_promptly(database_url: str, db: Any) -> None:
    notifications = Notifications(database_url, FAST)
    async with listening(notifications) as heard:
        started = time.monotonic()
        await notifications.stop()
        assert time.monotonic() - started < 0.5
        assert heard.states == [True, False]
        assert notifications.server_pid is None
        for _ in range(100):  # the server notices the goodbye a moment later
            if await sessions(db) == 0:
                break
            await asyncio.sleep(0.01)
        assert await sessions(db) == 0
        await notifications.stop()  # twice is harmless


async def test_the_connection_opens_only_once_something_subscribes(
    database_url: str, db: Any
) -> None:
    notifications = Notifications(database_url, FAST)
    async with running(notifications):
        await asyncio.sleep(0.1)
        assert await sessions(db) == 0
        heard = Heard()
        await notifications.subscribe("forge_test_a", heard.payload)
        await notifications.listening.wait()
        await notify(db, "forge_test_a", "late")
        await eventually(lambda: heard.payloads == ["late"])


async def test_a_failing_subscriber_does_not_stop_the_others(
    database_url: str, db: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_: object) -> None:
        raise RuntimeError("subscriber bug")

    notifications = Notifications(database_url, FAST)
    await notifications.subscribe("forge_test_a", broken, on_state=broken)
    async with listening(notifications) as heard:
        await notify(db, "forge_test_a", "still")
        await eventually(lambda: heard.payloads == ["still"])
    assert heard.states == [True, False]
    assert "subscriber bug" in caplog.text


async def test_channels_it_cannot_serve_are_refused() -> None:
    notifications = Notifications("postgresql://unused", FAST)
    for channel in ("", FAST.probe_channel, "x" * 64):
        with pytest.raises(ValueError):
            await notifications.subscribe(channel, Heard().payload)
    await notifications.subscribe("x" * 63, Heard().payload)  # the longest PostgreSQL keeps


async def test_an_application_has_one_instance_and_the_relay_rides_on_it(
    settings: Settings, db: Any
) -> None:
    """create_app runs one Notifications; the outbox relay (GATEWAY_URL set) subscribes to it
    instead of opening a LISTEN connection of its own, and so will every service."""
    gateway = f"http://127.0.0.1:{free_port()}/"
    app = create_app(replace(settings, gateway_url=gateway), [], notifications=FAST)
    server = TestServer(app)
    await server.start_server()
    try:
        async with asyncio.timeout(10):
            notifications = app[NOTIFICATIONS]
            await notifications.listening.wait()
            assert notifications.options is FAST
            assert await sessions(db) == 1
    finally:
        await server.close()
    assert notifications.server_pid is None  # stopped with the application
