"""Slow clients on `forge serve` without nginx in front (docs/http.md "Slow clients"): a request
head that trickles in is cut after HEADER_READ_TIMEOUT, an idle keep-alive connection (new, or
after a response) is closed after KEEPALIVE_TIMEOUT; a slow body is not a slow head, and a
connection in use stays open. Real sockets against forge's runner (ForgeTestServer)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from forge_common.app import create_app
from forge_common.render import json_response
from forge_common.service import Service
from forge_testing.server import ForgeTestServer

HEAD_TIMEOUT = 0.5
IDLE_TIMEOUT = 1.0
# far beyond both limits, far below aiohttp's own default (3,630 s): a connection still open
# after this is not bounded
BOUND = 8.0


async def echo(request: web.Request) -> web.Response:
    return json_response({"bytes": len(await request.read())})


def setup(app: web.Application, settings: object) -> None:
    app.router.add_post("/api/v2/echo", echo)
    app.router.add_get("/api/v2/echo", echo)


@pytest.fixture
async def server(settings):
    settings = dataclasses.replace(
        settings, header_read_timeout=HEAD_TIMEOUT, keepalive_timeout=IDLE_TIMEOUT
    )
    app = create_app(settings, [Service("t", None, None, setup)])
    async with ForgeTestServer(app) as test_server:
        yield test_server


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> float:
    """Seconds until the server closed the connection (EOF); fails after `seconds`."""
    started = time.monotonic()
    try:
        while await asyncio.wait_for(reader.read(65536), seconds):
            pass
    except TimeoutError:
        pytest.fail(f"the connection was still open after {seconds} s")
    return time.monotonic() - started


async def _connect(server: TestServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(server.host, server.port)


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_a_request_head_that_trickles_in_is_cut(server, caplog):
    caplog.set_level(logging.INFO)
    reader, writer = await _connect(server)
    writer.write(b"GET /api/v2/echo HTTP/1.1\r\nHost: x\r\n")

    async def trickle() -> None:  # a header line every 0.1 s, never the blank line
        for n in range(200):
            await asyncio.sleep(0.1)
            if writer.is_closing():
                return
            try:
                writer.write(f"X-Slow-{n}: y\r\n".encode())
                await writer.drain()
            except ConnectionError:
                return

    sender = asyncio.create_task(trickle())
    try:
        took = await _closed_within(reader, BOUND)
    finally:
        sender.cancel()
        writer.close()
    assert took < BOUND
    assert "its request head did not arrive within 0.5 s" in caplog.text


async def test_a_new_connection_that_sends_nothing_is_closed(server):
    reader, writer = await _connect(server)
    try:
        assert await _closed_within(reader, BOUND) >= IDLE_TIMEOUT * 0.9
    finally:
        writer.close()


async def test_an_idle_keep_alive_connection_is_closed_after_its_response(server):
    reader, writer = await _connect(server)
    try:
        writer.write(b"GET /api/v2/echo HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 200")
        assert b"keep-alive" in head.lower() or b"connection: close" not in head.lower()
        await _closed_within(reader, BOUND)
    finally:
        writer.close()


async def test_a_slow_body_is_not_a_slow_head_and_a_busy_connection_stays_open(server):
    """The body takes three times the head deadline (bounded by BODY_READ_TIMEOUT instead);
    then a second request on the same connection, after a pause under the idle limit."""
    reader, writer = await _connect(server)
    try:
        writer.write(b"POST /api/v2/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n")
        for byte in b"abcdef":
            await asyncio.sleep(HEAD_TIMEOUT / 4)
            writer.write(bytes([byte]))
            await writer.drain()
        reply = await asyncio.wait_for(reader.readuntil(b'{"bytes":6}'), 10)
        assert reply.startswith(b"HTTP/1.1 200")
        await asyncio.sleep(IDLE_TIMEOUT / 3)
        writer.write(b"GET /api/v2/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        again = await asyncio.wait_for(reader.read(), 10)
        assert again.startswith(b"HTTP/1.1 200")
    finally:
        writer.close()
