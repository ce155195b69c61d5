"""Reading an organization, the viewer's place in it, and its summary counts."""

from __future__ import annotations

from forge_common.auth import Viewer
from forge_common.db import Conn

from ..models import Org, OrgView


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
