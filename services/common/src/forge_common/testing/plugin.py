"""pytest fixtures for every package: a throwaway PostgreSQL cluster for the whole run, a
migrated template database, and a fresh database cloned from it for each test (fast clean state).

Set TEST_DATABASE_URL to use an existing server instead (its user must be able to create databases).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from ..config import Settings
from ..db import connect
from ..embedded_pg import EmbeddedPostgres
from ..migrations import migrate
from ..service import WorldIds, all_migrations, installed_services
from ..world import load_world

T = TypeVar("T")
TEMPLATE = "forge_template"
_counter = itertools.count()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync fixture code without touching the test's event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of the server's `postgres` database."""
    existing = os.environ.get("TEST_DATABASE_URL")
    if existing:
        yield existing
        return
    folder = Path(tempfile.mkdtemp(prefix="forge-test-pg-"))
    server = EmbeddedPostgres(folder, database="postgres")
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


async def _create_template(server_url: str) -> None:
    admin = await asyncpg.connect(server_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{TEMPLATE}"')
    finally:
        await admin.close()
    conn = await connect(with_database(server_url, TEMPLATE))
    try:
        await migrate(conn, all_migrations(installed_services()))
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def template_url(pg_server_url: str) -> str:
    run_sync(_create_template(pg_server_url))
    return with_database(pg_server_url, TEMPLATE)


async def _admin(server_url: str, sql: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture
def database_url(pg_server_url: str, template_url: str) -> Iterator[str]:
    """A fresh, migrated, empty database for one test."""
    name = f"forge_test_{os.getpid()}_{next(_counter)}"
    run_sync(_admin(pg_server_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"'))
    try:
        yield with_database(pg_server_url, name)
    finally:
        run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=database_url,
        app_url="http://forge.test/",
        storage_path=tmp_path / "storage",
        server_os="linux",
        server_arch="x64",
    )


@pytest.fixture
async def db(database_url: str) -> Any:
    conn = await connect(database_url)
    yield conn
    await conn.close()


LoadWorld = Callable[[Mapping[str, Any]], Awaitable[WorldIds]]


@pytest.fixture
def load(settings: Settings) -> LoadWorld:
    """`await load({...world...})` loads a world file's content into the test's database."""

    async def _load(world: Mapping[str, Any]) -> WorldIds:
        conn = await connect(settings.database_url)
        try:
            return await load_world(conn, world, list(installed_services().values()), settings)
        finally:
            await conn.close()

    return _load
