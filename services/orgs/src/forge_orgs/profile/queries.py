"""SQL of the organization's profile: reading an organization, the viewer's place in it and its
summary counts; its members (the public list and the public flag)."""

from __future__ import annotations

from forge_common.auth import Viewer
from forge_common.db import Conn

from ..models import Member, Org, OrgView


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


async def public_members(conn: Conn, org_id: int) -> list[Member]:
    """Every public member, by login (case-insensitive; names are unique that way)."""
    rows = await conn.fetch(
        """SELECT a.id, a.name AS login, a.full_name, m.role
             FROM core.org_members m JOIN core.accounts a ON a.id = m.user_id
            WHERE m.org_id = $1 AND m.public
            ORDER BY lower(a.name)""",
        org_id,
    )
    return [Member(**dict(row)) for row in rows]


async def user_by_name(conn: Conn, name: str) -> tuple[int, str] | None:
    """A user's id and name as stored (organizations are not users)."""
    row = await conn.fetchrow(
        "SELECT id, name FROM core.accounts WHERE lower(name) = lower($1) AND kind = 'user'", name
    )
    return (row["id"], row["name"]) if row else None


async def lock_membership(conn: Conn, org_id: int, user_id: int) -> bool | None:
    """The member's public flag, locked until commit; None when the user is not a member."""
    public: bool | None = await conn.fetchval(
        "SELECT public FROM core.org_members WHERE org_id = $1 AND user_id = $2 FOR UPDATE",
        org_id,
        user_id,
    )
    return public


async def set_public(conn: Conn, org_id: int, user_id: int, public: bool) -> None:
    await conn.execute(
        "UPDATE core.org_members SET public = $3 WHERE org_id = $1 AND user_id = $2",
        org_id,
        user_id,
        public,
    )


async def membership_public(conn: Conn, org_id: int, user_id: int) -> bool | None:
    """The member's public flag; None when the user is not a member."""
    public: bool | None = await conn.fetchval(
        "SELECT public FROM core.org_members WHERE org_id = $1 AND user_id = $2", org_id, user_id
    )
    return public
