"""pytest fixtures for every package: a throwaway PostgreSQL cluster for the whole run, a
migrated template database, and a fresh database for each test: cloned from it, or one an earlier
test used, emptied again (databases.py).

Set TEST_DATABASE_URL to use an existing server instead (its user must be able to create databases).

Under pytest-xdist (`make test`) each worker is a process with a session of its own: its own
cluster on a port of its block (ports.py) and its own template, named after the worker, so workers
sharing a TEST_DATABASE_URL server never drop or clone each other's template.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg
import pytest
from forge_common.accounts import passwords
from forge_common.config import Settings, argon2_parameters
from forge_common.db import connect
from forge_common.embedded_pg import EmbeddedPostgres
from forge_common.migrations import migrate
from forge_common.service import WorldIds, all_migrations, installed_services
from forge_common.world import load_world

from .databases import DatabaseFactory, execute, with_database
from .ports import free_port, worker_name

T = TypeVar("T")
TEMPLATE = f"forge_template_{worker_name()}"

# Tests hash passwords with argon2id's cheapest cost, in this process and (through the
# environment) every `forge` process they start: the default's 0.2 s of CPU per hash made up most
# of the sign-in tests' time. Nothing a test checks depends on the cost, and test_passwords.py
# holds the default parameters (docs/accounts.md "Passwords").
TEST_ARGON2_PARAMETERS = "t=1,m=1024,p=1"
os.environ.setdefault("ARGON2_PARAMETERS", TEST_ARGON2_PARAMETERS)
logging.getLogger("forge_common.accounts.passwords").setLevel(logging.ERROR)
passwords.configure(argon2_parameters(os.environ))
_counter = itertools.count()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync fixture code without touching the test's event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def query(database_url: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """The rows of `sql`, on a connection of its own, from sync test code (what a process under
    test stored)."""

    async def fetch() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(database_url)
        try:
            rows: list[asyncpg.Record] = await conn.fetch(sql, *args)
            return rows
        finally:
            await conn.close()

    return run_sync(fetch())


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """`forge` commands run in a test configure the root logger; undo it after each test so
    no test sees another's log handlers or level."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(autouse=True)
def _cheap_passwords() -> Iterator[None]:
    """A `forge` command run in this process sets the parameters its environment names (none:
    the default's 0.2 s a hash): put the test's back for the tests after it."""
    yield
    wanted = argon2_parameters(os.environ)
    if passwords.current_parameters() != wanted:
        passwords.configure(wanted)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of the server's `postgres` database."""
    existing = os.environ.get("TEST_DATABASE_URL")
    if existing:
        yield existing
        return
    folder = Path(tempfile.mkdtemp(prefix="forge-test-pg-"))
    # throwaway data: no fsync, no full-page writes (forge dev keeps them on: durable=True)
    server = EmbeddedPostgres(folder, database="postgres", durable=False, port=free_port())
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


async def _create_template(server_url: str) -> None:
    await execute(server_url, f'DROP DATABASE IF EXISTS "{TEMPLATE}" WITH (FORCE)')
    await execute(server_url, f'CREATE DATABASE "{TEMPLATE}"')
    conn = await connect(with_database(server_url, TEMPLATE))
    try:
        await migrate(conn, all_migrations(installed_services()))
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def template_url(pg_server_url: str) -> str:
    run_sync(_create_template(pg_server_url))
    return with_database(pg_server_url, TEMPLATE)


@pytest.fixture(scope="session")
def database_factory(pg_server_url: str, template_url: str) -> Iterator[DatabaseFactory]:
    factory = DatabaseFactory(pg_server_url, TEMPLATE, template_url)
    yield factory
    factory.close()


@pytest.fixture
def database_url(pg_server_url: str, database_factory: DatabaseFactory) -> Iterator[str]:
    """A fresh, migrated, empty database for one test."""
    name = database_factory.acquire()
    try:
        yield with_database(pg_server_url, name)
    finally:
        database_factory.release(name)


def settings_for(database_url: str, storage_path: Path) -> Settings:
    """Settings every test app uses: a fixed APP_URL and a server that is linux/x64, so update
    checks without platform or arch answer the same on every machine."""
    return Settings(
        database_url=database_url,
        app_url="http://forge.test/",
        storage_path=storage_path,
        server_os="linux",
        server_arch="x64",
    )


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, tmp_path / "storage")


@pytest.fixture
async def db(database_url: str) -> Any:
    conn = await connect(database_url)
    yield conn
    await conn.close()


LoadWorld = Callable[[Mapping[str, Any]], Awaitable[WorldIds]]


async def _load_into(settings: Settings, world: Mapping[str, Any]) -> WorldIds:
    conn = await connect(settings.database_url)
    try:
        return await load_world(conn, world, list(installed_services().values()), settings)
    finally:
        await conn.close()


@pytest.fixture
def load(settings: Settings) -> LoadWorld:
    """`await load({...world...})` loads a world file's content into the test's database."""

    async def _load(world: Mapping[str, Any]) -> WorldIds:
        return await _load_into(settings, world)

    return _load


@dataclass(frozen=True, slots=True)
class SharedWorld:
    settings: Settings
    ids: WorldIds


class WorldDatabases:
    """Databases loaded once with a world and shared by the tests that only read it: cheaper
    than a clone and a load per test. Each is dropped by `drop()` or at the end of the run."""

    def __init__(self, server_url: str, storage_root: Path) -> None:
        self.server_url = server_url
        self.storage_root = storage_root
        self._names: list[str] = []

    def create(self, world: Mapping[str, Any]) -> SharedWorld:
        name = f"forge_shared_{os.getpid()}_{next(_counter)}"
        run_sync(execute(self.server_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"'))
        self._names.append(name)
        settings = settings_for(with_database(self.server_url, name), self.storage_root / name)
        return SharedWorld(settings, run_sync(_load_into(settings, world)))

    def drop(self, shared: SharedWorld) -> None:
        name = urlsplit(shared.settings.database_url).path.lstrip("/")
        self._names.remove(name)
        run_sync(execute(self.server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def close(self) -> None:
        for name in self._names:
            run_sync(execute(self.server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._names.clear()


@pytest.fixture(scope="session")
def world_databases(
    pg_server_url: str, template_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorldDatabases]:
    """`world_databases.create({...world...})`: a database with that world, shared by a module's
    or the whole run's read-only tests (wrap it in a fixture of that scope)."""
    databases = WorldDatabases(pg_server_url, tmp_path_factory.mktemp("shared-storage"))
    yield databases
    databases.close()
