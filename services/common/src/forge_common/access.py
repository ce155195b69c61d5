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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

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


Row = TypeVar("Row", bound=Mapping[str, Any])


async def readable(
    conn: asyncpg.Connection[Any] | asyncpg.Pool, viewer: Viewer | None, rows: Sequence[Row]
) -> list[Row]:
    """The rows (each with a repository's `id`) of the repositories the viewer may read, in their
    order: one `repository_access` call for all of them."""
    levels = await repository_access(conn, viewer, [row["id"] for row in rows])
    return [row for row in rows if levels.get(row["id"], Access.NONE) >= Access.READ]


# the repositories the viewer belongs to (owner, organization member, collaborator, team member);
# what they may read of them is `decide`'s answer (`readable`)
_VIEWER_REPOSITORIES_SQL = """
SELECT r.id, o.name AS owner, r.name, r.description
  FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
 WHERE r.owner_id = $1
    OR r.owner_id IN (SELECT org_id FROM core.org_members WHERE user_id = $1)
    OR r.id IN (SELECT repo_id FROM core.collaborators WHERE user_id = $1)
    OR r.id IN (SELECT tr.repo_id FROM core.team_repos tr
                  JOIN core.team_members tm ON tm.team_id = tr.team_id WHERE tm.user_id = $1)
 ORDER BY r.updated_at DESC, r.id DESC LIMIT $2
"""


async def repositories_of_viewer(
    conn: asyncpg.Connection[Any] | asyncpg.Pool, viewer: Viewer, limit: int
) -> list[dict[str, Any]]:
    """The latest-updated `limit` repositories the viewer belongs to, those they may read of them
    (`id`, `owner`, `name`, `description`), newest first."""
    rows = [dict(row) for row in await conn.fetch(_VIEWER_REPOSITORIES_SQL, viewer.id, limit)]
    return await readable(conn, viewer, rows)


# `owner_visible`'s rule in SQL: a public organization to everyone, a limited one to the signed-in
# ($2 not NULL), a private one to site admins ($3) and its members
_VISIBLE_PUBLIC_MEMBERSHIPS_SQL = """
SELECT o.name, o.full_name, o.description
  FROM core.org_members m JOIN core.accounts o ON o.id = m.org_id
 WHERE m.user_id = $1 AND m.public
   AND (o.visibility = 'public'
        OR (o.visibility = 'limited' AND $2::bigint IS NOT NULL)
        OR $3
        OR EXISTS (SELECT 1 FROM core.org_members v WHERE v.org_id = o.id AND v.user_id = $2))
 ORDER BY lower(o.name)
"""


async def visible_public_memberships(
    conn: asyncpg.Connection[Any] | asyncpg.Pool, user_id: int, viewer: Viewer | None
) -> list[asyncpg.Record]:
    """The organizations where `user_id`'s membership is public and which the viewer may see
    (`name`, `full_name`, `description`), by name."""
    return await conn.fetch(
        _VISIBLE_PUBLIC_MEMBERSHIPS_SQL,
        user_id,
        viewer.id if viewer else None,
        bool(viewer and viewer.is_admin),
    )
