"""Two `forge dev` (make run) in one checkout: the second shares the first one's embedded
PostgreSQL, stopping either leaves the other's database running, and a start on a busy port stops
nothing (docs/architecture.md "Two make run in one checkout")."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir, free_port
from forge_testing.processes import wait_until_ready

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")

ROOT = Path(__file__).resolve().parents[3]
FORGE = str(Path(sys.executable).parent / "forge")


def _command(data: Path, port: int) -> list[str]:
    """`make run PORT=port` in a checkout whose `.data` is `data`."""
    world = str(ROOT / "demo/world.json")
    return [FORGE, "dev", "--world", world, "--data-dir", str(data), "--port", str(port)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "STORAGE_PATH")}
    return {**env, "LOG_LEVEL": "WARNING"}  # no DATABASE_URL: the embedded PostgreSQL


def _dev(data: Path, port: int) -> subprocess.Popen[bytes]:
    log = (data.parent / f"dev-{port}.log").open("ab")
    with log:  # the child has its own copy
        return subprocess.Popen(_command(data, port), env=_env(), stdout=log, stderr=log)


async def _serving(process: subprocess.Popen[bytes], port: int) -> None:
    """It is ready, and a request that reads the database answers."""
    base = f"http://127.0.0.1:{port}/"
    await wait_until_ready(base + "readyz", exit_code=process.poll, within=90)
    async with (
        aiohttp.ClientSession() as session,
        session.get(base + "api/v1/repos/acme/app/releases") as response,
    ):
        assert response.status == 200, await response.text()


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(60) == 0


@pytest.fixture
def checkout() -> Iterator[Path]:
    """Not pytest's tmp_path: every pytest session on the machine takes the other users' access
    to that tree away again, and the embedded PostgreSQL runs as `postgres` when we are root."""
    folder = Path(tempfile.mkdtemp(prefix="forge-side-by-side-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_two_make_run_in_one_checkout_each_stopped_in_turn(checkout: Path) -> None:
    data = checkout / ".data"
    first_port, second_port = free_port(), free_port()
    first = _dev(data, first_port)
    second: subprocess.Popen[bytes] | None = None
    try:
        await _serving(first, first_port)
        second = _dev(data, second_port)  # make run PORT=8097 beside a running make run
        await _serving(second, second_port)

        # a second start on the busy port refuses before touching anything
        busy = await asyncio.to_thread(
            subprocess.run,
            _command(data, first_port),
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert busy.returncode == 1
        assert f"port {first_port} is already in use" in busy.stderr
        assert "Traceback" not in busy.stderr
        await _serving(first, first_port)
        await _serving(second, second_port)

        _stop(first)  # the first stopped: the second keeps its database
        await _serving(second, second_port)

        first = _dev(data, first_port)  # and the other way round
        await _serving(first, first_port)
        _stop(second)
        await _serving(first, first_port)

        _stop(first)  # the last one out stops the server
        assert EmbeddedPostgres(data / "postgres").running_port() is None
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        EmbeddedPostgres(data / "postgres").stop()
