"""The world file (DESIGN §3): validated whole before anything is written, then loaded in one
transaction. Core loads accounts, organizations, teams, repositories and tokens; each service
validates and loads its own sections through its `Service` hooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import yaml

from . import checks
from .auth import hash_token
from .config import Settings
from .service import Service, WorldIds

PERMISSIONS = frozenset({"read", "write", "admin"})
VISIBILITIES = frozenset({"public", "limited", "private"})
_TOP_LEVEL = frozenset({"users", "orgs", "repos"})


class WorldError(ValueError):
    """The world file cannot be loaded; `problems` names every bad entry."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def read_world_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WorldError([f"{path}: cannot read ({exc.strerror})"]) from None
    try:
        data = yaml.safe_load(raw) if path.suffix in {".yaml", ".yml"} else orjson.loads(raw)
    except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise WorldError(
            [f"{path}: not valid {path.suffix.lstrip('.') or 'JSON'}: {exc}"]
        ) from None
    if not isinstance(data, dict):
        raise WorldError([f"{path}: the world must be an object"])
    return data


async def _existing_names(
    conn: asyncpg.Connection[Any],
) -> tuple[dict[str, str], set[tuple[str, str]]]:
    accounts = {
        r["lname"]: r["kind"]
        for r in await conn.fetch("SELECT lower(name) AS lname, kind FROM core.accounts")
    }
    repos = {
        (r["owner"], r["repo"])
        for r in await conn.fetch(
            "SELECT lower(a.name) AS owner, lower(r.name) AS repo "
            "FROM core.repositories r JOIN core.accounts a ON a.id = r.owner_id"
        )
    }
    return accounts, repos


def validate_core(
    world: Mapping[str, Any], existing: dict[str, str], existing_repos: set[tuple[str, str]]
) -> list[str]:
    errors: list[str] = []
    for key in world:
        if key not in _TOP_LEVEL:
            errors.append(f"{key}: unknown section (expected users, orgs or repos)")
    users = checks.entries(world, "users", "", errors)
    orgs = checks.entries(world, "orgs", "", errors)
    repos = checks.entries(world, "repos", "", errors)
    kinds = dict(existing)
    names: list[tuple[str, str]] = []
    for i, user_entry in enumerate(users):
        path = f"users[{i}]"
        name = checks.text(user_entry, "name", path, errors, required=True, pattern=checks.NAME)
        checks.text(user_entry, "full_name", path, errors)
        checks.text(user_entry, "email", path, errors)
        checks.flag(user_entry, "admin", path, errors)
        for j, token in enumerate(checks.strings(user_entry, "tokens", path, errors)):
            if not token.strip() or len(token) > 512:
                errors.append(f"{path}.tokens[{j}]: must be 1 to 512 characters")
        names.append((f"{path}.name", name))
        kinds.setdefault(name.lower(), "user")
    for i, org in enumerate(orgs):
        path = f"orgs[{i}]"
        name = checks.text(org, "name", path, errors, required=True, pattern=checks.NAME)
        for key in ("full_name", "description", "website", "location"):
            checks.text(org, key, path, errors)
        checks.text(org, "visibility", path, errors, choices=VISIBILITIES)
        names.append((f"{path}.name", name))
        kinds.setdefault(name.lower(), "org")
    checks.unique(names, errors, "account name")
    for path, name in names:
        if name.lower() in existing:
            errors.append(f"{path}: account {name!r} already exists")

    def is_user(ref: str) -> bool:
        return kinds.get(ref.lower()) == "user"

    repo_names: list[tuple[str, str]] = []
    for i, repo in enumerate(repos):
        path = f"repos[{i}]"
        owner = checks.text(repo, "owner", path, errors, required=True)
        name = checks.text(repo, "name", path, errors, required=True, pattern=checks.REPO_NAME)
        if owner and owner.lower() not in kinds:
            errors.append(f"{path}.owner: unknown account {owner!r}")
        for key in ("private", "public_landing", "public_releases", "archived"):
            checks.flag(repo, key, path, errors)
        checks.text(repo, "description", path, errors)
        for j, collab in enumerate(checks.entries(repo, "collaborators", path, errors)):
            cpath = f"{path}.collaborators[{j}]"
            user = checks.text(collab, "user", cpath, errors, required=True)
            if user and not is_user(user):
                errors.append(f"{cpath}.user: unknown user {user!r}")
            checks.text(collab, "permission", cpath, errors, required=True, choices=PERMISSIONS)
        repo_names.append((f"{path}.name", f"{owner}/{name}"))
        if (owner.lower(), name.lower()) in existing_repos:
            errors.append(f"{path}: repository {owner}/{name} already exists")
    checks.unique(repo_names, errors, "repository")
    file_repos = {
        (r.get("owner", "").lower(), r.get("name", "").lower())
        for r in repos
        if isinstance(r.get("owner"), str) and isinstance(r.get("name"), str)
    }

    for i, org in enumerate(orgs):
        path = f"orgs[{i}]"
        org_name = str(org.get("name", "")).lower()
        members: set[str] = set()
        for j, member in enumerate(checks.entries(org, "members", path, errors)):
            mpath = f"{path}.members[{j}]"
            user = checks.text(member, "user", mpath, errors, required=True)
            if user and not is_user(user):
                errors.append(f"{mpath}.user: unknown user {user!r}")
            if user.lower() in members:
                errors.append(f"{mpath}.user: {user!r} is listed twice")
            members.add(user.lower())
            checks.flag(member, "owner", mpath, errors)
            checks.flag(member, "public", mpath, errors)
        teams = checks.entries(org, "teams", path, errors)
        team_names = []
        for j, team in enumerate(teams):
            tpath = f"{path}.teams[{j}]"
            team_names.append(
                (f"{tpath}.name", checks.text(team, "name", tpath, errors, required=True))
            )
            checks.text(team, "permission", tpath, errors, required=True, choices=PERMISSIONS)
            for k, login in enumerate(checks.strings(team, "members", tpath, errors)):
                if login.lower() not in members:
                    errors.append(
                        f"{tpath}.members[{k}]: {login!r} is not a member of the organization"
                    )
            for k, repo_name in enumerate(checks.strings(team, "repos", tpath, errors)):
                if (org_name, repo_name.lower()) not in file_repos | existing_repos:
                    errors.append(
                        f"{tpath}.repos[{k}]: unknown repository {repo_name!r} of this organization"
                    )
        checks.unique(team_names, errors, "team")
    return errors


async def _load_core(conn: asyncpg.Connection[Any], world: Mapping[str, Any]) -> WorldIds:
    accounts: dict[str, int] = {
        r["lname"]: r["id"]
        for r in await conn.fetch("SELECT lower(name) AS lname, id FROM core.accounts")
    }
    for user in world.get("users", []):
        user_id = await conn.fetchval(
            """INSERT INTO core.accounts (kind, name, full_name, email, is_admin)
               VALUES ('user', $1, $2, $3, $4) RETURNING id""",
            user["name"],
            user.get("full_name", ""),
            user.get("email", ""),
            user.get("admin", False),
        )
        accounts[user["name"].lower()] = user_id
        for token in user.get("tokens", []):
            await conn.execute(
                "INSERT INTO core.access_tokens (user_id, name, token_sha256) "
                "VALUES ($1, 'world', $2)",
                user_id,
                hash_token(token),
            )
    for org in world.get("orgs", []):
        org_id = await conn.fetchval(
            """INSERT INTO core.accounts
                   (kind, name, full_name, description, website, location, visibility)
               VALUES ('org', $1, $2, $3, $4, $5, $6) RETURNING id""",
            org["name"],
            org.get("full_name", ""),
            org.get("description", ""),
            org.get("website", ""),
            org.get("location", ""),
            org.get("visibility", "public"),
        )
        accounts[org["name"].lower()] = org_id
        for member in org.get("members", []):
            await conn.execute(
                "INSERT INTO core.org_members (org_id, user_id, role, public) "
                "VALUES ($1, $2, $3, $4)",
                org_id,
                accounts[member["user"].lower()],
                "owner" if member.get("owner") else "member",
                member.get("public", False),
            )
    repos: dict[tuple[str, str], int] = {
        (r["owner"], r["repo"]): r["id"]
        for r in await conn.fetch(
            "SELECT lower(a.name) AS owner, lower(r.name) AS repo, r.id "
            "FROM core.repositories r JOIN core.accounts a ON a.id = r.owner_id"
        )
    }
    for repo in world.get("repos", []):
        repo_id = await conn.fetchval(
            """INSERT INTO core.repositories
                   (owner_id, name, description, private, public_landing, public_releases, archived)
               VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id""",
            accounts[repo["owner"].lower()],
            repo["name"],
            repo.get("description", ""),
            repo.get("private", False),
            repo.get("public_landing", False),
            repo.get("public_releases", False),
            repo.get("archived", False),
        )
        repos[(repo["owner"].lower(), repo["name"].lower())] = repo_id
        for collab in repo.get("collaborators", []):
            await conn.execute(
                "INSERT INTO core.collaborators (repo_id, user_id, permission) VALUES ($1, $2, $3)",
                repo_id,
                accounts[collab["user"].lower()],
                collab["permission"],
            )
    for org in world.get("orgs", []):
        org_id = accounts[org["name"].lower()]
        for team in org.get("teams", []):
            team_id = await conn.fetchval(
                "INSERT INTO core.teams (org_id, name, permission) "
                "VALUES ($1, $2, $3) RETURNING id",
                org_id,
                team["name"],
                team["permission"],
            )
            for user in team.get("members", []):
                await conn.execute(
                    "INSERT INTO core.team_members (team_id, user_id) VALUES ($1, $2)",
                    team_id,
                    accounts[user.lower()],
                )
            for repo_name in team.get("repos", []):
                await conn.execute(
                    "INSERT INTO core.team_repos (team_id, repo_id) VALUES ($1, $2)",
                    team_id,
                    repos[(org["name"].lower(), repo_name.lower())],
                )
    return WorldIds(accounts=accounts, repos=repos)


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
        existing, existing_repos = await _existing_names(conn)
        errors = validate_core(world, existing, existing_repos)
        for service in services:
            if service.validate_world is not None:
                service.validate_world(world, errors)
        if errors:
            raise WorldError(errors)
        ids = await _load_core(conn, world)
        for service in services:
            if service.load_world is not None:
                await service.load_world(conn, world, ids, settings)
        return ids
