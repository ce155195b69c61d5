"""Downloads sent by the real `forge serve` process itself, no proxy (docs/storage.md "Serving"):
it runs on uvloop, where the bytes go out by the kernel's sendfile on the connection
(forge_releases/downloads/zerocopy.py; forge_download_zero_copy_bytes_total says so). A file
larger than the socket buffers arrives byte for byte, whole and in ranges, on one keep-alive
connection; clients that leave mid-file cost nothing: the process keeps answering, logs no
error, counts no download and only the bytes it sent."""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import random
import socket
import struct
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from forge_testing.processes import forge_load, start_forge_service, wait_until_ready
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.e2e

BIG = 24 * 1024 * 1024 + 123  # several times what the socket buffers hold, not a round size
PATH = "/acme/app/releases/download/v1.0.0/big.bin"
WORLD = {
    "users": [{"name": "alice"}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [{"tag": "v1.0.0", "assets": [{"name": "big.bin", "size": BIG}]}],
        }
    ],
}


@dataclass
class Served:
    port: int
    content: bytes  # the stored file
    log: Path

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)

    def counters(self) -> tuple[float, float, float]:
        """(full downloads, bytes sent, of which by sendfile) from the process's /metrics."""
        url = f"http://127.0.0.1:{self.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as reply:
            text = reply.read().decode()
        values = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
        return (
            values["forge_downloads_total"],
            values["forge_download_bytes_total"],
            values["forge_download_zero_copy_bytes_total"],
        )


@pytest.fixture(scope="module")
def served(e2e_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("direct")
    storage = tmp / "storage"
    forge_load(e2e_database, storage, WORLD, tmp)
    (blob,) = (p for p in (storage / "sha256").rglob("*") if p.is_file())
    log = tmp / "releases.log"
    with log.open("wb") as output:
        process, url = start_forge_service("releases", e2e_database, storage, output=output)
    try:
        asyncio.run(wait_until_ready(url + "readyz", exit_code=process.poll))
        port = urlsplit(url).port
        assert port is not None
        yield Served(port, blob.read_bytes(), log)
    finally:
        process.terminate()
        process.wait(15)


def test_a_large_file_and_its_ranges_arrive_byte_for_byte_on_one_connection(
    served: Served,
) -> None:
    downloads, sent, zero_copy = served.counters()
    conn = served.connection()
    try:
        conn.request("GET", PATH)
        reply = conn.getresponse()
        body = reply.read()
        assert reply.status == 200
        assert reply.headers["Content-Length"] == str(BIG)
        assert reply.headers["ETag"] == f'"{hashlib.sha256(body).hexdigest()}"'
        assert body == served.content

        wanted = [(0, 0), (1, BIG - 2), (BIG - 1000, BIG - 1), (5_000_000, 5_000_000 + 65_536)]
        for start, end in wanted:
            conn.request("GET", PATH, headers={"Range": f"bytes={start}-{end}"})
            reply = conn.getresponse()
            part = reply.read()
            assert reply.status == 206, (start, end)
            assert reply.headers["Content-Range"] == f"bytes {start}-{end}/{BIG}"
            assert part == served.content[start : end + 1], (start, end)

        conn.request("HEAD", PATH)  # the connection is still in step after the bodies
        reply = conn.getresponse()
        assert reply.read() == b""
        assert reply.headers["Content-Length"] == str(BIG)
    finally:
        conn.close()

    ranged = sum(end + 1 - start for start, end in wanted)
    # every byte went by the kernel's sendfile, not through Python
    assert served.counters() == (downloads + 1, sent + BIG + ranged, zero_copy + BIG + ranged)


def _leave_mid_file(port: int, *, reset: bool, rng: random.Random) -> int:
    """Start a download with a small receive buffer, read part of it, leave; bytes read."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.settimeout(15)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {PATH} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    wanted = rng.randrange(100_000, BIG // 2)
    received = 0
    while received < wanted:
        chunk = sock.recv(256 * 1024)
        assert chunk, "the server closed first"
        received += len(chunk)
    if reset:  # an RST rather than a FIN: the server's next send fails at once
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    return received


def test_clients_leaving_mid_file_leave_the_server_healthy(served: Served) -> None:
    downloads, sent, _ = served.counters()
    rng = random.Random(10)
    read = sum(_leave_mid_file(served.port, reset=i % 2 == 0, rng=rng) for i in range(6))
    time.sleep(0.5)  # the server notices the last ones

    conn = served.connection()
    try:
        conn.request("GET", "/readyz")
        ready = conn.getresponse()
        ready.read()
        assert ready.status == 200
        conn.request("GET", PATH)
        assert conn.getresponse().read() == served.content
    finally:
        conn.close()

    after_downloads, after_sent, _ = served.counters()
    assert after_downloads == downloads + 1  # only the complete one
    left = after_sent - sent - BIG  # the kernel took for those that left: less than a file each
    assert read <= left < 6 * BIG
    log = served.log.read_text(errors="replace")
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
