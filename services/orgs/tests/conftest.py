"""Shared fixtures: a world with one organization of each visibility, people in every relation
to them, and a client that checks every response against the served OpenAPI document."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from forge_common.config import Settings
from forge_common.db import connect
from forge_common.service import WorldIds, installed_services
from forge_common.testing.plugin import TEMPLATE, run_sync, with_database
from forge_common.world import load_world
from forge_orgs.app import create_app

from .openapi_check import Api

TOKENS = {
    "owner": "olive-token",
    "member": "mia-token",
    "concealed": "cora-token",
    "stranger": "stan-token",
    "admin": "ada-token",
}
VIEWERS = ["anonymous", "stranger", "member", "owner", "admin"]
LOGINS = {
    "owner": "olive",
    "member": "mia",
    "concealed": "cora",
    "stranger": "stan",
    "admin": "ada",
}


def _org(name: str, visibility: str) -> dict[str, Any]:
    return {
        "name": name,
        "full_name": name.title(),
        "description": f"The {visibility} one",
        "visibility": visibility,
        "members": [
            {"user": "olive", "owner": True, "public": True},
            {"user": "mia", "public": True},
            {"user": "cora", "public": False},
        ],
        "teams": [{"name": "devs", "permission": "read", "members": ["mia"], "repos": []}],
        "pin_groups": [
            {"name": "Featured", "display_order": 1},
            {"name": "Hidden", "display_order": 2, "collapsed": True},
        ],
        "pins": [
            {"repo": "open", "group": "Featured", "display_order": 1},
            {"repo": "secret", "group": "Hidden", "display_order": 2},
            {"repo": "loose", "display_order": 3},
        ],
    }


def world() -> dict[str, Any]:
    """Orgs `pub`, `lim`, `priv`, each with a public pinned repo `open` (group Featured), a
    private pinned repo `secret` (group Hidden, which holds nothing else), a public pinned repo
    `loose` (no group), an unpinned public repo `spare` and an unpinned private repo `vault`."""
    users = [
        {"name": login, "full_name": login.title(), "tokens": [TOKENS[role]]}
        for role, login in LOGINS.items()
    ]
    users[-1]["admin"] = True
    repos = []
    for org in ("pub", "lim", "priv"):
        for repo, private in (
            ("open", False),
            ("secret", True),
            ("loose", False),
            ("spare", False),
            ("vault", True),
        ):
            repos.append({"owner": org, "name": repo, "private": private})
    return {
        "users": users,
        "orgs": [_org("pub", "public"), _org("lim", "limited"), _org("priv", "private")],
        "repos": repos,
    }


@pytest.fixture
async def ids(load: Any) -> Any:
    return await load(world())


@pytest.fixture
async def api(aiohttp_client: Any, settings: Any) -> Api:
    client = await aiohttp_client(create_app(settings))
    return Api(client, TOKENS)


_shared = itertools.count()


async def _admin(server_url: str, sql: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def _load(settings: Settings, content: Mapping[str, Any]) -> WorldIds:
    conn = await connect(settings.database_url)
    try:
        return await load_world(conn, content, list(installed_services().values()), settings)
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def shared_world(
    pg_server_url: str, template_url: str, tmp_path_factory: Any
) -> Iterator[tuple[Settings, WorldIds]]:
    """One database with `world()` for a whole module of tests that only read."""
    name = f"forge_orgs_shared_{os.getpid()}_{next(_shared)}"
    run_sync(_admin(pg_server_url, f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"'))
    settings = Settings(
        database_url=with_database(pg_server_url, name),
        app_url="http://forge.test/",
        storage_path=Path(tmp_path_factory.mktemp("storage")),
        server_os="linux",
        server_arch="x64",
    )
    try:
        yield settings, run_sync(_load(settings, world()))
    finally:
        run_sync(_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
async def ro_api(aiohttp_client: Any, shared_world: tuple[Settings, WorldIds]) -> Api:
    """A client on the module's shared world: for tests that change nothing."""
    return Api(await aiohttp_client(create_app(shared_world[0])), TOKENS)


@pytest.fixture
def ro_ids(shared_world: tuple[Settings, WorldIds]) -> WorldIds:
    return shared_world[1]
