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


async def stats(conn: Conn, org_id: int) -> Stats:
    """Every count of the overview in one round trip, whatever the organization's size."""
    row = await conn.fetchrow(
        """SELECT (SELECT count(*) FROM core.org_members WHERE org_id = $1) AS member_count,
                  (SELECT count(*) FROM core.org_members
                    WHERE org_id = $1 AND public) AS public_member_count,
                  (SELECT count(*) FROM core.teams WHERE org_id = $1) AS team_count,
                  (SELECT count(*) FROM core.repositories WHERE owner_id = $1) AS repo_count,
                  (SELECT count(*) FROM core.repositories
                    WHERE owner_id = $1 AND NOT private) AS public_repo_count,
                  ARRAY(SELECT id FROM core.repositories
                         WHERE owner_id = $1 AND private ORDER BY id) AS private_repo_ids""",
        org_id,
    )
    assert row is not None
    return Stats(**dict(row))
