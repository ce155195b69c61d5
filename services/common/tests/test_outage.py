"""docs/architecture.md "Dependency outages": PostgreSQL restarted under requests is 503 with
Retry-After (never 500), one warning when the outage starts and one when it ends, /readyz false
meanwhile, and back by itself. A cluster of its own: the session's is not restarted."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from pathlib import Path

import pytest
from aiohttp import web
from forge_common.app import create_app
from forge_common.config import Settings
from forge_common.db import connect
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir
from forge_common.keys import DB_POOL
from forge_common.migrations import discover, migrate
from forge_common.outage import DependencyDown, dependency, is_database_down
from forge_common.render import json_response
from forge_common.service import Service
from forge_testing.ports import free_port
from forge_testing.waiting import eventually

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")


async def query(request: web.Request) -> web.Response:
    return json_response({"one": await request.app[DB_POOL].fetchval("SELECT 1")})


async def store(request: web.Request) -> web.Response:
    storage = dependency(request.app, "storage")
    if request.query.get("fail"):
        raise storage.failed(OSError("disk gone"), "The file could not be stored; try again later")
    storage.succeeded()
    return json_response({})


def setup(app: web.Application, settings: object) -> None:
    app.router.add_get("/api/v2/query", query)
    app.router.add_get("/api/v1/query", query)
    app.router.add_get("/api/v2/store", store)


@pytest.fixture
async def cluster():
    folder = Path(tempfile.mkdtemp(prefix="forge-outage-"))
    server = EmbeddedPostgres(folder, durable=False, port=free_port())
    url = server.start()
    conn = await connect(url)
    try:
        await migrate(conn, discover("core", "forge_common.core_migrations"))
        await conn.execute(
            "INSERT INTO core.accounts (kind, name) VALUES ('user', 'alice');"
            "INSERT INTO core.access_tokens (user_id, name, token_sha256) SELECT id, 't', "
            "sha256('alice-token'::bytea) FROM core.accounts"
        )
    finally:
        await conn.close()
    yield server
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_postgres_restart_is_503_logged_once_and_recovers(
    cluster, aiohttp_client, tmp_path, caplog
):
    caplog.set_level(logging.WARNING)
    settings = Settings(database_url=cluster.url, storage_path=tmp_path)
    client = await aiohttp_client(create_app(settings, [Service("t", None, None, setup)]))
    paths = ["/api/v2/query", "/api/v1/query", "/readyz"]
    auth = {"Authorization": "token alice-token"}
    assert (await client.get("/api/v2/query", headers=auth)).status == 200

    await asyncio.to_thread(cluster.stop)  # pg_ctl stop -m fast: pooled connections are cut
    for _ in range(5):
        for path in paths:
            for headers in ({}, auth):  # the token lookup too
                response = await client.get(path, headers=headers)
                assert response.status == 503, (path, await response.text())
                if path != "/readyz":
                    assert response.headers["Retry-After"] == "5"
                    assert "X-Request-Id" in response.headers
    body = await (await client.get("/api/v2/query")).json()
    assert body["error"]["code"] == "ServiceUnavailable"
    assert await (await client.get("/api/v1/query")).json() == {"message": "Service unavailable"}

    await asyncio.to_thread(cluster.start)
    statuses: list[int] = []

    async def back() -> bool:
        response = await client.get("/api/v2/query", headers=auth)
        statuses.append(response.status)
        return response.status == 200

    await eventually(back, within=5, what="requests answered again", interval=0.1)
    assert set(statuses) <= {200, 503}
    for path in paths:
        assert (await client.get(path, headers=auth)).status == 200
    await eventually(
        lambda: any("available again" in r.getMessage() for r in caplog.records), within=3
    )
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    messages = [r.getMessage() for r in warnings]
    assert len(warnings) == 2, messages
    assert "database unavailable" in messages[0] and "available again" in messages[1]
    assert all(r.exc_info is None for r in warnings)


async def test_another_dependency_uses_the_same_helper(cluster, aiohttp_client, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    settings = Settings(database_url=cluster.url, storage_path=tmp_path)
    client = await aiohttp_client(create_app(settings, [Service("t", None, None, setup)]))
    for _ in range(3):
        response = await client.get("/api/v2/store?fail=1")
        assert response.status == 503 and response.headers["Retry-After"] == "5"
        error = (await response.json())["error"]
        assert error["message"] == "The file could not be stored; try again later"
    assert (await client.get("/api/v2/store")).status == 200
    messages = [r.getMessage() for r in caplog.records if r.name == "forge_common.outage"]
    assert len(messages) == 2 and "storage unavailable (OSError: disk gone)" in messages[0]


def test_what_counts_as_the_database_being_down():
    assert issubclass(DependencyDown, Exception)
    assert not is_database_down(RuntimeError("bug"))
    assert not is_database_down(FileNotFoundError("not asyncpg's"))
    assert not is_database_down(TimeoutError())
