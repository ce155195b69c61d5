"""Which way a download's bytes leave the service (downloads/zerocopy.py): by the kernel's sendfile
on a plain connection, through Python where the bytes must pass through the transport (TLS).
Either way the client gets the same bytes; the counters say which way they went. (Under uvloop,
what `forge serve` runs: tests-e2e/test_direct_downloads.py.)"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from forge_releases.keys import DOWNLOAD_COUNTER
from forge_releases.service import create_app
from forge_releases.storage import deterministic_bytes

from .support import one_repo, rel

SIZE = 3_000_000
PATH = "/owner/app/releases/download/v1.0.0/big.bin"
CONTENT = b"".join(deterministic_bytes("big.bin", SIZE))
RANGE = (1_000_000, 2_500_000)


def _world() -> dict[str, Any]:
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": "big.bin", "size": SIZE}]
    return one_repo([release])


async def _download_twice(session: aiohttp.ClientSession, base: str) -> None:
    """The whole file, then a range of it: byte-identical both."""
    async with session.get(base + PATH) as whole:
        assert whole.status == 200
        assert await whole.read() == CONTENT
    start, end = RANGE
    async with session.get(base + PATH, headers={"Range": f"bytes={start}-{end}"}) as part:
        assert part.status == 206
        assert await part.read() == CONTENT[start : end + 1]


SENT = SIZE + RANGE[1] + 1 - RANGE[0]


async def test_a_plain_connection_sends_by_sendfile(make_client: Any, load: Any) -> None:
    await load(_world())
    client = await make_client()
    await _download_twice(client.session, str(client.make_url("")))
    counter = client.app[DOWNLOAD_COUNTER]
    assert (counter.bytes_sent, counter.bytes_zero_copy) == (SENT, SENT)


# a throwaway self-signed certificate for 127.0.0.1: cert.pem, key.pem
OPENSSL_REQ = [
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-keyout",
    "key.pem",
    "-out",
    "cert.pem",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
]


@pytest.fixture
def certificate(tmp_path: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (cert.pem, key.pem in the returned folder)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    subprocess.run(OPENSSL_REQ, cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


async def test_tls_sends_through_python_the_same_bytes(
    settings: Any, load: Any, aiohttp_server: Any, certificate: Path
) -> None:
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(certificate / "cert.pem", certificate / "key.pem")
    trusted = ssl.create_default_context(cafile=certificate / "cert.pem")
    await load(_world())
    app = create_app(settings)
    server = await aiohttp_server(app, ssl=served)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trusted)) as session:
        await _download_twice(session, f"https://127.0.0.1:{server.port}")
    counter = app[DOWNLOAD_COUNTER]
    assert (counter.bytes_sent, counter.bytes_zero_copy) == (SENT, 0)
