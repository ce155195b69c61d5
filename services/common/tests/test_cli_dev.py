"""`forge dev` (make run): "ready" is printed only once the port is bound, and a port already in
use says which one and how to choose another (README "Try it")."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

from forge_testing.ports import free_port

ROOT = Path(__file__).resolve().parents[3]
FORGE = str(Path(sys.executable).parent / "forge")


async def _start_dev(database_url: str, tmp_path: Path, port: int) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,  # no embedded PostgreSQL: the test's database
        "STORAGE_PATH": str(tmp_path / "storage"),
        "LOG_LEVEL": "WARNING",
    }
    return await asyncio.create_subprocess_exec(
        FORGE,
        "dev",
        "--world",
        str(ROOT / "demo/world.json"),
        "--data-dir",
        str(tmp_path / "data"),
        "--port",
        str(port),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_ready_is_printed_once_the_port_accepts_connections(database_url, tmp_path):
    port = free_port()
    process = await _start_dev(database_url, tmp_path, port)
    try:
        assert process.stdout is not None
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            assert line, "forge dev ended without saying it was ready"
            if line.startswith(b"forge: ready at"):
                break
        # at once, no retry: the port was bound before the line was printed
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        assert line.strip() == f"forge: ready at http://localhost:{port}/".encode()
    finally:
        process.terminate()
        await process.wait()


async def test_a_port_in_use_is_named_with_how_to_choose_another(database_url, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await _start_dev(database_url, tmp_path, port)
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    assert b"ready" not in out
    message = err.decode()
    assert f"port {port} is already in use on 127.0.0.1" in message
    assert "--port N" in message and "make run PORT=N" in message
    assert "Traceback" not in message
