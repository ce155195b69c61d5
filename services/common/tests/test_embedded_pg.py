"""Embedded PostgreSQL: a cluster left running by a killed `make run` does not stop the
next start, which takes over its folder."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import asyncpg
import pytest
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")


async def test_a_server_left_running_is_stopped_and_the_cluster_started_again():
    folder = Path(tempfile.mkdtemp(prefix="forge-embedded-"))
    first = EmbeddedPostgres(folder / "pg")
    second = EmbeddedPostgres(folder / "pg")
    try:
        first.start()  # and never stopped, as when `make run` is killed
        url = second.start()
        assert second.port != first.port
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT current_database()") == "forge"
        finally:
            await conn.close()
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
