"""SIGTERM stops `forge serve` gracefully (docs/architecture.md "Stopping"): a real process with
requests in flight when the signal arrives. They complete; new connections are refused; the
download they counted is in the database after the exit, with status 0."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest
from forge_testing.processes import forge_load, start_forge_service, wait_until_ready
from forge_testing.waiting import until

pytestmark = pytest.mark.e2e

BIG = 16 * 1024 * 1024  # more than the socket buffers hold: the download is still being sent
WORLD = {
    "users": [{"name": "alice", "admin": True, "tokens": ["alice-stop-token"]}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [{"tag": "v1.0.0", "assets": [{"name": "big.bin", "size": BIG}]}],
        }
    ],
}


def _connect(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)  # a slow reader
    sock.settimeout(15)
    sock.connect(("127.0.0.1", port))
    return sock


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _read_all(sock: socket.socket, *, pause: float = 0.0) -> bytes:
    data = b""
    while chunk := sock.recv(256 * 1024):
        data += chunk
        time.sleep(pause)
    return data


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True


def test_sigterm_finishes_requests_in_flight_then_exits_0(database_url, tmp_path):
    with contextlib.ExitStack() as sockets:
        _stop_with_requests_in_flight(database_url, tmp_path, sockets)

    async def stored() -> tuple[int, bool]:
        conn = await asyncpg.connect(database_url)
        try:
            count = await conn.fetchval(
                "SELECT download_count FROM releases.assets WHERE name = 'big.bin'"
            )
            created = await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM releases.releases WHERE tag = 'v2.0.0')"
            )
            return count, created
        finally:
            await conn.close()

    # the completed download was counted and flushed at the exit; the release was created
    assert asyncio.run(stored()) == (1, True)


def _stop_with_requests_in_flight(
    database_url: str, tmp_path: Path, sockets: contextlib.ExitStack
) -> None:
    storage = tmp_path / "storage"
    forge_load(database_url, storage, WORLD, tmp_path)
    process, url = start_forge_service("releases", database_url, storage)
    try:
        asyncio.run(wait_until_ready(url + "readyz", exit_code=process.poll))
        port = urlsplit(url).port
        assert port is not None

        # a download the client reads slowly: its handler is still sending when SIGTERM comes
        download = sockets.enter_context(_connect(port))
        download.sendall(
            b"GET /acme/app/releases/download/v1.0.0/big.bin HTTP/1.1\r\n"
            b"Host: x\r\nConnection: close\r\n\r\n"
        )
        head, first = _read_head(download)
        assert head.startswith(b"HTTP/1.1 200"), head
        # a request whose body is still arriving
        body = json.dumps({"tag_name": "v2.0.0", "draft": True}).encode()
        upload = sockets.enter_context(_connect(port))
        upload.sendall(
            b"POST /api/v2/repos/acme/app/releases HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: token alice-stop-token\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body[:5]
        )
        time.sleep(0.3)  # the request has reached its handler

        process.send_signal(signal.SIGTERM)
        until(lambda: _refused(port), 5, "the listening socket closed after SIGTERM")

        upload.sendall(body[5:])
        created_head, created_body = _read_head(upload)
        created_body += _read_all(upload)
        assert created_head.startswith(b"HTTP/1.1 201"), created_head + created_body
        rest = _read_all(download, pause=0.01)
        assert len(first) + len(rest) == BIG
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
