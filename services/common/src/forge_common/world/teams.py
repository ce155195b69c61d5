"""`orgs[i].teams[j]`: a team grants its members, who must belong to the organization, a
permission on some of the organization's repositories."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any

import asyncpg

from .. import checks
from .names import Names
from .repos import PERMISSIONS


def validate_teams(
    org: Mapping[str, Any], path: str, members: Set[str], names: Names, errors: list[str]
) -> None:
    """`members` are the organization's, lower-cased; `names` holds every repository."""
    org_name = str(org.get("name", "")).lower()
    org_repos = {repo for owner, repo in names.repos if owner == org_name}
    team_names = []
    for j, team in enumerate(checks.entries(org, "teams", path, errors)):
        tpath = f"{path}.teams[{j}]"
        team_names.append(
            (f"{tpath}.name", _validate_team(team, tpath, members, org_repos, errors))
        )
    checks.unique(team_names, errors, "team")


def _validate_team(
    team: Mapping[str, Any], path: str, members: Set[str], repos: Set[str], errors: list[str]
) -> str:
    name = checks.display_name(team, "name", path, errors, required=True)
    checks.text(team, "permission", path, errors, required=True, choices=PERMISSIONS)
    for k, login in enumerate(checks.strings(team, "members", path, errors)):
        if login.lower() not in members:
            errors.append(f"{path}.members[{k}]: {login!r} is not a member of the organization")
    for k, repo in enumerate(checks.strings(team, "repos", path, errors)):
        if repo.lower() not in repos:
            errors.append(f"{path}.repos[{k}]: unknown repository {repo!r} of this organization")
    return name


async def load_teams(
    conn: asyncpg.Connection[Any],
    orgs: Iterable[Mapping[str, Any]],
    accounts: Mapping[str, int],
    repos: Mapping[tuple[str, str], int],
) -> None:
    """After the repositories, which teams are granted."""
    for org in orgs:
        for team in org.get("teams", []):
            await _load_team(conn, org["name"].lower(), team, accounts, repos)


async def _load_team(
    conn: asyncpg.Connection[Any],
    org: str,
    team: Mapping[str, Any],
    accounts: Mapping[str, int],
    repos: Mapping[tuple[str, str], int],
) -> None:
    team_id = await _insert_team(conn, accounts[org], team["name"], team["permission"])
    for login in team.get("members", []):
        await conn.execute(
            "INSERT INTO core.team_members (team_id, user_id) VALUES ($1, $2)",
            team_id,
            accounts[login.lower()],
        )
    for repo in team.get("repos", []):
        await conn.execute(
            "INSERT INTO core.team_repos (team_id, repo_id) VALUES ($1, $2)",
            team_id,
            repos[(org, repo.lower())],
        )


async def _insert_team(
    conn: asyncpg.Connection[Any], org_id: int, name: str, permission: str
) -> int:
    team_id: int = await conn.fetchval(
        "INSERT INTO core.teams (org_id, name, permission) VALUES ($1, $2, $3) RETURNING id",
        org_id,
        name,
        permission,
    )
    return team_id
