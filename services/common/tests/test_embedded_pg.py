"""Embedded PostgreSQL: a cluster left running by a killed `make run` does not stop the next
start, which takes it over; a cluster a live process uses is shared and never stopped under it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import asyncpg
import pytest
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir
from forge_testing.plugin import run_sync

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")

# a process that starts the cluster, says so, and waits to be killed (a `make run` killed -9)
_STARTER = """
import sys
from pathlib import Path
from forge_common.embedded_pg import EmbeddedPostgres
server = EmbeddedPostgres(Path(sys.argv[1]))
server.start()
print(server.port, flush=True)
sys.stdin.read()
"""


async def _database(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        return str(await conn.fetchval("SELECT current_database()"))
    finally:
        await conn.close()


def test_a_server_whose_owner_was_killed_is_stopped_and_the_cluster_started_again():
    folder = Path(tempfile.mkdtemp(prefix="forge-embedded-"))
    starter = subprocess.Popen(
        [sys.executable, "-c", _STARTER, str(folder / "pg")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    second = EmbeddedPostgres(folder / "pg")
    try:
        assert starter.stdout is not None
        first_port = int(starter.stdout.readline())
        starter.send_signal(signal.SIGKILL)  # its server keeps running, its owner is gone
        starter.communicate()
        assert second.running_port() == first_port
        url = second.start()
        assert second.port != first_port  # a server of its own, not the leftover
        assert run_sync(_database(url)) == "forge"
    finally:
        second.stop()
        starter.kill()
        starter.communicate()
        shutil.rmtree(folder, ignore_errors=True)


async def test_a_server_a_live_process_uses_is_shared_and_stopped_by_the_last_one_out():
    folder = Path(tempfile.mkdtemp(prefix="forge-embedded-"))
    first = EmbeddedPostgres(folder / "pg")
    second = EmbeddedPostgres(folder / "pg")
    try:
        first.start()
        url = second.start()
        assert second.port == first.port  # shared, not restarted
        first.stop()
        assert second.running_port() == second.port  # still running for the second
        assert await _database(url) == "forge"
        second.stop()
        assert second.running_port() is None
    finally:
        second.stop()
        first.stop()
        shutil.rmtree(folder, ignore_errors=True)


async def test_make_run_keeps_its_data_and_tests_trade_safety_for_speed(pg_server_url):
    folder = Path(tempfile.mkdtemp(prefix="forge-embedded-"))
    durable = EmbeddedPostgres(folder / "pg")  # what `forge dev` starts (durable=True)
    try:
        conn = await asyncpg.connect(durable.start())
        try:
            for setting in ("fsync", "full_page_writes", "synchronous_commit"):
                assert await conn.fetchval(f"SHOW {setting}") == "on", setting
        finally:
            await conn.close()
    finally:
        durable.stop()
        shutil.rmtree(folder, ignore_errors=True)
    if os.environ.get("TEST_DATABASE_URL"):
        return  # a server the suite did not start
    conn = await asyncpg.connect(pg_server_url)  # the suite's own cluster (durable=False)
    try:
        assert await conn.fetchval("SHOW fsync") == "off"
        assert await conn.fetchval("SHOW full_page_writes") == "off"
    finally:
        await conn.close()
