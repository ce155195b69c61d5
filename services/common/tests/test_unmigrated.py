"""A process started before its database is migrated (a first `kubectl apply -k`, the migrate Job
still running): `/readyz` is 503 and says why until the schema is at the version the code
expects, and no request meets a missing table as a 500 (docs/architecture.md "Health")."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web
from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.keys import DB_POOL
from forge_common.render import json_response
from forge_common.service import Service
from forge_testing.plugin import with_database
from forge_testing.processes import forge_env, start_forge_service, wait_until_ready

FORGE = str(Path(sys.executable).parent / "forge")
_names = itertools.count()

# what a first visitor and a first client ask, by way of every service and the sign-in
REQUESTS = [
    ("GET", "api/v2/repos/acme/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"),
    ("GET", "api/v1/repos/acme/app/releases"),
    ("GET", "api/v1/repos/acme/app/releases/latest"),
    ("GET", "api/v1/orgs/acme"),
    ("GET", "acme/app"),
    ("GET", "acme"),
    ("GET", "explore/repos"),
    ("POST", "api/v1/user/repos"),
]


@pytest.fixture
async def empty_database(pg_server_url: str):
    name = f"forge_unmigrated_{os.getpid()}_{next(_names)}"
    admin = await asyncpg.connect(pg_server_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')  # not the template: never migrated
        yield with_database(pg_server_url, name)
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_not_ready_and_503_not_500_until_migrated(empty_database: str, tmp_path: Path):
    log = (tmp_path / "forge.log").open("w+b")
    process, base = start_forge_service("all", empty_database, tmp_path / "storage", output=log)
    try:
        await wait_until_ready(base + "healthz", exit_code=process.poll)
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "readyz") as ready:
                assert ready.status == 503
                assert "Retry-After" in ready.headers
                reason = (await ready.json())["reason"]
                assert "not migrated" in reason and "forge db migrate" in reason
            headers = {"Authorization": "token some-token"}
            for method, path in REQUESTS:
                # an anonymous write is refused before any query (401), the rest need the database
                for sent in ({}, headers) if method == "GET" else (headers,):
                    async with session.request(method, base + path, headers=sent) as response:
                        body = await response.text()
                        assert response.status == 503, (method, path, response.status, body)
                        assert "Retry-After" in response.headers, path
                        assert "not migrated" in body, (path, body)
                        assert "relation" not in body and "Traceback" not in body

            migrated = await asyncio.to_thread(
                subprocess.run,
                [FORGE, "db", "migrate"],
                env=forge_env(empty_database, base, tmp_path / "storage"),
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert migrated.returncode == 0, migrated.stderr
            await wait_until_ready(base + "readyz", exit_code=process.poll)
            async with session.get(base + "api/v1/repos/acme/app/releases") as response:
                assert response.status == 404  # an empty database: no such repository
    finally:
        process.terminate()
        process.wait(30)
    log.close()
    output = (tmp_path / "forge.log").read_text()
    assert "Traceback" not in output, output
    assert output.count("schema unavailable") == 1, output  # one warning, not one per request


async def _missing_table(request: web.Request) -> web.Response:
    await request.app[DB_POOL].fetchval("SELECT count(*) FROM public.no_such_table")
    return json_response({})


def _setup(app: web.Application, settings: object) -> None:
    app.router.add_get("/api/v2/broken", _missing_table)


async def test_on_a_migrated_schema_a_missing_table_is_a_bug_not_an_outage(
    database_url: str, tmp_path: Path, aiohttp_client: Any
) -> None:
    """Only while the schema is not known to be at the code's version is a missing relation 503:
    once /readyz has found it migrated, the same error is a 500 (a bug is not hidden)."""
    settings = Settings(database_url=database_url, storage_path=tmp_path)
    client = await aiohttp_client(create_app(settings, [Service("t", None, None, _setup)]))
    assert (await client.get("/api/v2/broken")).status == 503  # not known yet: not migrated?
    assert (await client.get("/readyz")).status == 200  # the template database is migrated
    assert (await client.get("/api/v2/broken")).status == 500
