"""Teams of an organization, their members and repositories (`/api/v1/orgs/{org}/teams`,
`/api/v1/teams/{id}/...`). Joining a team makes the user a member of the organization, as in
Gitea; leaving the last team does not end the membership (Gitea's neither). A team that
includes all repositories (Gitea's Owners team) holds every repository of its organization, those
made or moved there later too (core migration 0006's trigger); removing one from it is ignored,
as Gitea ignores it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

from ..db import Conn, Queryable
from ..errors import Unprocessable
from . import queries
from .events import record
from .models import Account, Repository
from .orgs import ensure_member

PERMISSIONS = ("read", "write", "admin")
MAX_NAME = 255


@dataclass(frozen=True, slots=True)
class Team:
    id: int
    org_id: int
    name: str
    description: str
    permission: str
    includes_all_repositories: bool = False


async def teams_of(db: Queryable, org_id: int) -> list[Team]:
    rows = await db.fetch(queries.TEAMS_OF, org_id)
    return [Team(**dict(row)) for row in rows]


async def team_with_org_name(db: Queryable, team_id: int) -> tuple[Team, str] | None:
    """The team and its organization's name, in one query."""
    row = await db.fetchrow(queries.TEAM_WITH_ORG_NAME, team_id)
    if row is None:
        return None
    values = dict(row)
    org_name = values.pop("org_name")
    return Team(**values), org_name


async def create_team(
    conn: Conn,
    org: Account,
    actor_id: int,
    *,
    name: str,
    description: str,
    permission: str,
    includes_all_repositories: bool = False,
) -> Team:
    if not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        raise Unprocessable(f"name must be 1 to {MAX_NAME} printable characters", field="name")
    if permission not in PERMISSIONS:
        raise Unprocessable("permission must be one of read, write, admin", field="permission")
    try:
        async with conn.transaction():
            row = await conn.fetchrow(
                queries.INSERT_TEAM,
                org.id,
                name,
                description,
                permission,
                includes_all_repositories,
            )
            assert row is not None
            if includes_all_repositories:  # those made later: the trigger
                await conn.execute(queries.INSERT_TEAM_ALL_REPOS, row["id"], org.id)
    except asyncpg.UniqueViolationError:
        raise Unprocessable(
            f"team already exists [org_id: {org.id}, name: {name}]", field="name"
        ) from None
    team = Team(**dict(row))
    await record(
        conn,
        "team.created",
        {
            "org_id": org.id,
            "org": org.name,
            "team_id": team.id,
            "team": team.name,
            "permission": permission,
            "includes_all_repositories": includes_all_repositories,
        },
        actor_id=actor_id,
        org_id=org.id,
    )
    return team


async def add_team_member(
    conn: Conn, org: Account, team: Team, user: Account, actor_id: int
) -> bool:
    await ensure_member(conn, org, user, actor_id)
    added = await conn.fetchval(queries.INSERT_TEAM_MEMBER, team.id, user.id)
    if added:
        await record(
            conn,
            "team.member.added",
            _membership(org, team, user),
            actor_id=actor_id,
            org_id=org.id,
        )
    return bool(added)


def _membership(org: Account, team: Team, user: Account) -> dict[str, Any]:
    """The payload of `team.member.added` and `team.member.removed`."""
    return {
        "org_id": org.id,
        "org": org.name,
        "team_id": team.id,
        "team": team.name,
        "user_id": user.id,
        "login": user.name,
    }


async def remove_team_member(
    conn: Conn, org: Account, team: Team, user: Account, actor_id: int
) -> bool:
    removed = await conn.fetchval(queries.DELETE_TEAM_MEMBER, team.id, user.id)
    if removed:
        await record(
            conn,
            "team.member.removed",
            _membership(org, team, user),
            actor_id=actor_id,
            org_id=org.id,
        )
    return bool(removed)


async def is_team_member(db: Queryable, team_id: int, user_id: int) -> bool:
    return bool(await db.fetchval(queries.IS_TEAM_MEMBER, team_id, user_id))


async def set_team_repo(conn: Conn, team: Team, repo: Repository, *, present: bool) -> bool:
    """Add (or remove) a repository of the team's organization; True when it changed. A team
    that includes all repositories keeps each (Gitea ignores the removal)."""
    if not present and team.includes_all_repositories:
        return False
    sql = queries.INSERT_TEAM_REPO if present else queries.DELETE_TEAM_REPO
    return bool(await conn.fetchval(sql, team.id, repo.id))
