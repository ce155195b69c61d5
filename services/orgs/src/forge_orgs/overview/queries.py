"""The overview in one round trip: the organization, the viewer's role, every pin with its
repository and group, the groups, the first 12 public members and every count, whatever the
organization's size. Nested lists travel as JSON (decoded by the pool's orjson codec)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from forge_common.db import Conn, Queryable

from ..models import Group, Member, Org, Pin, Stats
from ..pins.queries import pin_from_row

OVERVIEW_MEMBERS = 12  # docs/http.md "Limits": public members in the overview

# The viewer's grants of their own (collaborator, team) on the organization's private repositories.
_GRANTED = """ARRAY(SELECT c.repo_id
               FROM core.collaborators c
               JOIN core.repositories cr ON cr.id = c.repo_id
              WHERE c.user_id = $2 AND cr.owner_id = o.id AND cr.private
             UNION
             SELECT tr.repo_id
               FROM core.team_members tm
               JOIN core.teams t ON t.id = tm.team_id AND t.org_id = o.id
               JOIN core.team_repos tr ON tr.team_id = t.id
               JOIN core.repositories tr_r ON tr_r.id = tr.repo_id AND tr_r.private
              WHERE tm.user_id = $2)"""

# The limit is written into the statement, not bound: with `LIMIT $n` PostgreSQL keeps re-planning
# the prepared statement for each call (custom plans), which costs more than running it.
_OVERVIEW_SQL = f"""
WITH o AS (
    SELECT id, name, full_name, description, website, location, visibility
      FROM core.accounts WHERE lower(name) = lower($1) AND kind = 'org'
)
SELECT o.id, o.name, o.full_name, o.description, o.website, o.location, o.visibility,
       (SELECT m.role FROM core.org_members m WHERE m.org_id = o.id AND m.user_id = $2) AS role,
       (SELECT coalesce(json_agg(json_build_object(
                   'id', p.id, 'repo_id', p.repo_id, 'group_id', p.group_id,
                   'display_order', p.display_order,
                   'r_name', r.name, 'r_description', r.description, 'r_private', r.private,
                   'r_archived', r.archived, 'r_created_at', r.created_at,
                   'r_updated_at', r.updated_at, 'g_name', g.name,
                   'g_display_order', g.display_order, 'g_collapsed', g.collapsed)
                   ORDER BY p.display_order, p.id), '[]')
          FROM orgs.pins p
          JOIN core.repositories r ON r.id = p.repo_id AND r.owner_id = p.org_id
          LEFT JOIN orgs.pin_groups g ON g.id = p.group_id
         WHERE p.org_id = o.id) AS pins,
       (SELECT coalesce(json_agg(json_build_object(
                   'id', g.id, 'name', g.name, 'display_order', g.display_order,
                   'collapsed', g.collapsed) ORDER BY g.display_order, g.id), '[]')
          FROM orgs.pin_groups g WHERE g.org_id = o.id) AS groups,
       (SELECT coalesce(json_agg(x), '[]')
          FROM (SELECT a.id, a.name AS login, a.full_name, m.role
                  FROM core.org_members m JOIN core.accounts a ON a.id = m.user_id
                 WHERE m.org_id = o.id AND m.public
                 ORDER BY lower(a.name)
                 LIMIT {OVERVIEW_MEMBERS}) x) AS members,
       mc.member_count, mc.public_member_count,
       (SELECT count(*) FROM core.teams t WHERE t.org_id = o.id) AS team_count,
       rc.repo_count, rc.public_repo_count,
       {_GRANTED} AS granted_private_repo_ids
  FROM o,
       LATERAL (SELECT count(*) AS member_count,
                       count(*) FILTER (WHERE public) AS public_member_count
                  FROM core.org_members WHERE org_id = o.id) mc,
       LATERAL (SELECT count(*) AS repo_count,
                       count(*) FILTER (WHERE NOT private) AS public_repo_count
                  FROM core.repositories WHERE owner_id = o.id) rc
"""


@dataclass(frozen=True, slots=True)
class Overview:
    org: Org
    role: str | None
    pins: list[Pin]
    groups: list[Group]
    members: list[Member]
    stats: Stats


def _pin(item: dict[str, Any]) -> Pin:
    for key in ("r_created_at", "r_updated_at"):
        item[key] = datetime.fromisoformat(item[key])
    return pin_from_row(item)


async def overview(conn: Conn, name: str, viewer_id: int | None) -> Overview | None:
    """Everything the overview shows, unfiltered; None when no organization has that name."""
    row = await conn.fetchrow(_OVERVIEW_SQL, name, viewer_id)
    if row is None:
        return None
    return Overview(
        org=Org(
            id=row["id"],
            name=row["name"],
            full_name=row["full_name"],
            description=row["description"],
            website=row["website"],
            location=row["location"],
            visibility=row["visibility"],
        ),
        role=row["role"],
        pins=[_pin(item) for item in row["pins"]],
        groups=[Group(**item) for item in row["groups"]],
        members=[Member(**item) for item in row["members"]],
        stats=Stats(
            member_count=row["member_count"],
            public_member_count=row["public_member_count"],
            team_count=row["team_count"],
            repo_count=row["repo_count"],
            public_repo_count=row["public_repo_count"],
            granted_private_repo_ids=list(row["granted_private_repo_ids"]),
        ),
    )


# Who the viewer is to the organization, for the overview cache (overview.py): their role and
# their grants of their own on its private repositories.
_VIEWER_CLASS_SQL = f"""
SELECT o.id,
       (SELECT m.role FROM core.org_members m WHERE m.org_id = o.id AND m.user_id = $2) AS role,
       {_GRANTED} AS granted
  FROM core.accounts o
 WHERE lower(o.name) = lower($1) AND o.kind = 'org'
"""


@dataclass(frozen=True, slots=True)
class ViewerFacts:
    org_id: int
    role: str | None
    granted: tuple[int, ...]  # private repositories of the organization granted to the viewer


async def viewer_facts(conn: Queryable, name: str, viewer_id: int) -> ViewerFacts | None:
    """None when no organization has that name."""
    row = await conn.fetchrow(_VIEWER_CLASS_SQL, name, viewer_id)
    if row is None:
        return None
    return ViewerFacts(row["id"], row["role"], tuple(sorted(row["granted"])))
