"""The one access resolver: viewer × repository → none, read, write or admin.

Facts come from one query (`repository_access`); the decision is a pure function (`decide`) so the
whole matrix is testable and both services answer the same question the same way.

Rules, strongest first:
- nobody has any access to a repository of an owner they may not see (`owner_visible`: a private
  organization to anyone but its members and site admins, a limited one to anonymous callers),
  whatever grant they hold: a collaborator or team member outside a private organization gets
  what everyone outside it gets, nothing, on every route and every list (the start page included);
- a site admin, the owning user and the owners of the owning organization have admin;
- otherwise the best of the viewer's collaborator permission and team permissions;
- a public repository is readable by anyone who can see its owner (a public organization, a limited
  one when signed in, a private one only by its members): a public repository of an organization
  you may not see stays hidden (**privacy**);
- for the version-2 release API, a private repository with a public landing page or public
  releases is readable by anyone (docs/access.md "Authentication rules" 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import asyncpg

from .auth import Viewer


class Access(IntEnum):
    NONE = 0
    READ = 1
    WRITE = 2
    ADMIN = 3

    @classmethod
    def parse(cls, permission: str | None) -> Access:
        return _BY_NAME.get(permission or "", cls.NONE)


_BY_NAME = {"read": Access.READ, "write": Access.WRITE, "admin": Access.ADMIN}


@dataclass(frozen=True, slots=True)
class AccessFacts:
    """What the decision needs to know about one repository and one viewer."""

    owner_id: int
    owner_is_org: bool
    owner_visibility: str  # public | limited | private (organizations only)
    private: bool
    public_landing: bool
    public_releases: bool
    member_role: str | None = None  # viewer's role in the owning organization
    collaborator: str | None = None  # viewer's collaborator permission
    team: str | None = None  # viewer's best team permission on this repository


def owner_visible(facts: AccessFacts, viewer: Viewer | None) -> bool:
    if not facts.owner_is_org or facts.owner_visibility == "public":
        return True
    if viewer is None:
        return False
    if viewer.is_admin or facts.owner_visibility == "limited":
        return True
    return facts.member_role is not None


def decide(facts: AccessFacts, viewer: Viewer | None, *, release_api: bool = False) -> Access:
    if not owner_visible(facts, viewer):
        return Access.NONE
    level = Access.NONE
    if viewer is not None:
        if viewer.is_admin or viewer.id == facts.owner_id or facts.member_role == "owner":
            return Access.ADMIN
        level = max(Access.parse(facts.collaborator), Access.parse(facts.team))
    if not facts.private and owner_visible(facts, viewer):
        level = max(level, Access.READ)
    if release_api and facts.private and (facts.public_landing or facts.public_releases):
        level = max(level, Access.READ)
    return level


_FACTS_SQL = """
SELECT r.id,
       r.owner_id,
       o.kind = 'org' AS owner_is_org,
       o.visibility AS owner_visibility,
       r.private,
       r.public_landing,
       r.public_releases,
       m.role AS member_role,
       c.permission AS collaborator,
       (SELECT t.permission
          FROM core.team_repos tr
          JOIN core.teams t ON t.id = tr.team_id
          JOIN core.team_members tm ON tm.team_id = t.id
         WHERE tr.repo_id = r.id AND tm.user_id = $1
         ORDER BY array_position(ARRAY['admin', 'write', 'read'], t.permission)
         LIMIT 1) AS team
  FROM core.repositories r
  JOIN core.accounts o ON o.id = r.owner_id
  LEFT JOIN core.org_members m ON m.org_id = r.owner_id AND m.user_id = $1
  LEFT JOIN core.collaborators c ON c.repo_id = r.id AND c.user_id = $1
 WHERE r.id = ANY($2::bigint[])
"""


async def access_facts(
    conn: asyncpg.Connection[Any] | asyncpg.Pool, viewer: Viewer | None, repo_ids: Sequence[int]
) -> dict[int, AccessFacts]:
    rows = await conn.fetch(_FACTS_SQL, viewer.id if viewer else None, list(repo_ids))
    return {row["id"]: AccessFacts(**{k: v for k, v in row.items() if k != "id"}) for row in rows}


async def repository_access(
    conn: asyncpg.Connection[Any] | asyncpg.Pool,
    viewer: Viewer | None,
    repo_ids: Sequence[int],
    *,
    release_api: bool = False,
) -> dict[int, Access]:
    """Access level for each repository id (missing ids are absent from the result)."""
    facts = await access_facts(conn, viewer, repo_ids)
    return {repo_id: decide(f, viewer, release_api=release_api) for repo_id, f in facts.items()}


async def access_to(
    conn: asyncpg.Connection[Any] | asyncpg.Pool,
    viewer: Viewer | None,
    repo_id: int,
    *,
    release_api: bool = False,
) -> Access:
    levels = await repository_access(conn, viewer, [repo_id], release_api=release_api)
    return levels.get(repo_id, Access.NONE)
