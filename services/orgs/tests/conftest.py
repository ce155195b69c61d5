"""Shared fixtures: a world with one organization of each visibility, people in every relation
to them, and a client that checks every response against the served OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from forge_common.service import WorldIds
from forge_orgs.service import create_app
from forge_testing.plugin import SharedWorld, WorldDatabases

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


@pytest.fixture(scope="module")
def shared_world(world_databases: WorldDatabases) -> Iterator[SharedWorld]:
    """One database with `world()` for a whole module of tests that only read."""
    shared = world_databases.create(world())
    yield shared
    world_databases.drop(shared)


@pytest.fixture
async def ro_api(aiohttp_client: Any, shared_world: SharedWorld) -> Api:
    """A client on the module's shared world: for tests that change nothing."""
    return Api(await aiohttp_client(create_app(shared_world.settings)), TOKENS)


@pytest.fixture
def ro_ids(shared_world: SharedWorld) -> WorldIds:
    return shared_world.ids
