"""Reading an organization, the viewer's place in it, and its summary counts."""

from __future__ import annotations

from forge_common.auth import Viewer

from .dbconn import Conn
from .models import Org, OrgView, Stats


async def org_view(conn: Conn, name: str, viewer: Viewer | None) -> OrgView | None:
    """The organization named `name` (case-insensitively) and the viewer's role in it."""
    row = await conn.fetchrow(
        """SELECT a.id, a.name, a.full_name, a.description, a.website, a.location, a.visibility,
                  m.role
             FROM core.accounts a
             LEFT JOIN core.org_members m ON m.org_id = a.id AND m.user_id = $2
            WHERE lower(a.name) = lower($1) AND a.kind = 'org'""",
        name,
        viewer.id if viewer else None,
    )
    if row is None:
        return None
    values = dict(row)
    role = values.pop("role")
    return OrgView(org=Org(**values), viewer=viewer, role=role)


async def stats(conn: Conn, org_id: int, viewer_id: int | None) -> Stats:
    """Every count of the overview in one round trip, whatever the organization's size, and the
    private repositories on which the viewer holds a grant of their own (collaborator or team):
    the only ones whose readability can differ from the organization-wide answer."""
    row = await conn.fetchrow(
        """SELECT m.member_count, m.public_member_count,
                  (SELECT count(*) FROM core.teams WHERE org_id = $1) AS team_count,
                  r.repo_count, r.public_repo_count,
                  ARRAY(SELECT c.repo_id
                          FROM core.collaborators c
                          JOIN core.repositories cr ON cr.id = c.repo_id
                         WHERE c.user_id = $2 AND cr.owner_id = $1 AND cr.private
                        UNION
                        SELECT tr.repo_id
                          FROM core.team_members tm
                          JOIN core.teams t ON t.id = tm.team_id AND t.org_id = $1
                          JOIN core.team_repos tr ON tr.team_id = t.id
                          JOIN core.repositories tr_r ON tr_r.id = tr.repo_id AND tr_r.private
                         WHERE tm.user_id = $2) AS granted_private_repo_ids
             FROM (SELECT count(*) AS member_count,
                          count(*) FILTER (WHERE public) AS public_member_count
                     FROM core.org_members WHERE org_id = $1) m,
                  (SELECT count(*) AS repo_count,
                          count(*) FILTER (WHERE NOT private) AS public_repo_count
                     FROM core.repositories WHERE owner_id = $1) r""",
        org_id,
        viewer_id,
    )
    assert row is not None
    return Stats(**dict(row))
