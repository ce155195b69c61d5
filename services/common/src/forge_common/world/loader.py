"""The whole file validated, then loaded in one transaction: the order between the sections."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import asyncpg

from .. import checks
from ..config import Settings
from ..service import Service, WorldIds
from .files import WorldError
from .names import Names, stored_account_ids, stored_names, stored_repo_ids
from .orgs import load_orgs, validate_members, validate_org
from .repos import declared_repos, load_repos, validate_repos
from .teams import load_teams, validate_teams
from .users import load_users, validate_user

_SECTIONS = frozenset({"users", "orgs", "repos"})


async def load_world(
    conn: asyncpg.Connection[Any],
    world: Mapping[str, Any],
    services: Sequence[Service],
    settings: Settings,
) -> WorldIds:
    """Validate everything, then load everything in one transaction; WorldError loads nothing."""
    async with conn.transaction():
        # Serialize loaders: validation reads existing names, which a concurrent load could change.
        await conn.execute("LOCK TABLE core.accounts IN SHARE ROW EXCLUSIVE MODE")
        errors = validate_core(world, await stored_names(conn))
        for service in services:
            if service.validate_world is not None:
                service.validate_world(world, errors)
        if errors:
            raise WorldError(errors)
        ids = await load_core(conn, world)
        for service in services:
            if service.load_world is not None:
                await service.load_world(conn, world, ids, settings)
        return ids


def validate_core(world: Mapping[str, Any], stored: Names) -> list[str]:
    """Every problem of the users, orgs and repos sections, as `path: problem`."""
    errors = [
        f"{key}: unknown section (expected users, orgs or repos)"
        for key in world
        if key not in _SECTIONS
    ]
    users = checks.entries(world, "users", "", errors)
    orgs = checks.entries(world, "orgs", "", errors)
    repos = checks.entries(world, "repos", "", errors)
    user_names = _validate_accounts("users", users, validate_user, errors)
    org_names = _validate_accounts("orgs", orgs, validate_org, errors)
    _check_new_accounts(user_names + org_names, stored, errors)
    # Entries may refer to what is stored and to what the file adds, wherever it stands in it.
    known = stored.with_accounts("user", [name for _, name in user_names])
    known = known.with_accounts("org", [name for _, name in org_names])
    validate_repos(repos, known, errors)
    known = known.with_repos(declared_repos(world))
    for i, org in enumerate(orgs):
        members = validate_members(org, f"orgs[{i}]", known, errors)
        validate_teams(org, f"orgs[{i}]", members, known, errors)
    return errors


def _validate_accounts(
    section: str,
    entries: list[dict[str, Any]],
    validate: Callable[[Mapping[str, Any], str, list[str]], str],
    errors: list[str],
) -> list[tuple[str, str]]:
    """(path, name) of the name of each user or organization, for the checks across accounts."""
    names = []
    for i, entry in enumerate(entries):
        path = f"{section}[{i}]"
        names.append((f"{path}.name", validate(entry, path, errors)))
    return names


def _check_new_accounts(names: list[tuple[str, str]], stored: Names, errors: list[str]) -> None:
    """`names` holds (path, name) of every user and organization in the file."""
    checks.unique(names, errors, "account name")
    for path, name in names:
        if stored.has_account(name):
            errors.append(f"{path}: account {name!r} already exists")


async def load_core(conn: asyncpg.Connection[Any], world: Mapping[str, Any]) -> WorldIds:
    """Accounts, then the repositories they own, then the teams granted those repositories."""
    accounts = await stored_account_ids(conn)
    accounts |= await load_users(conn, world.get("users", []))
    accounts |= await load_orgs(conn, world.get("orgs", []), accounts)
    repos = await stored_repo_ids(conn)
    repos |= await load_repos(conn, world.get("repos", []), accounts)
    await load_teams(conn, world.get("orgs", []), accounts, repos)
    return WorldIds(accounts=accounts, repos=repos)
