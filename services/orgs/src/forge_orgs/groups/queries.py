"""SQL for pinned groups; every statement is scoped to one organization, so a group of another
organization behaves exactly like a group that does not exist."""

from __future__ import annotations

from collections.abc import Sequence

from forge_common.db import Conn

from ..models import Group

_COLUMNS = "id, name, display_order, collapsed"


async def list_groups(conn: Conn, org_id: int) -> list[Group]:
    """The organization's groups by display order then id (docs/http.md "Ordering")."""
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM orgs.pin_groups WHERE org_id = $1 ORDER BY display_order, id",
        org_id,
    )
    return [Group(**dict(row)) for row in rows]


async def existing_group_ids(conn: Conn, org_id: int, group_ids: Sequence[int]) -> set[int]:
    """Which of `group_ids` are groups of the organization, share-locked until commit so a
    concurrent delete cannot slip between this check and the write that relies on it."""
    rows = await conn.fetch(
        """SELECT id FROM orgs.pin_groups WHERE org_id = $1 AND id = ANY($2::bigint[])
           ORDER BY id FOR SHARE""",
        org_id,
        list(group_ids),
    )
    return {row["id"] for row in rows}


async def insert_group(
    conn: Conn, org_id: int, name: str, display_order: int, collapsed: bool
) -> Group:
    row = await conn.fetchrow(
        f"""INSERT INTO orgs.pin_groups (org_id, name, display_order, collapsed)
            VALUES ($1, $2, $3, $4) RETURNING {_COLUMNS}""",
        org_id,
        name,
        display_order,
        collapsed,
    )
    assert row is not None
    return Group(**dict(row))


async def lock_group(conn: Conn, org_id: int, group_id: int) -> Group | None:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM orgs.pin_groups WHERE org_id = $1 AND id = $2 FOR UPDATE",
        org_id,
        group_id,
    )
    return Group(**dict(row)) if row else None


async def save_group(conn: Conn, org_id: int, group: Group) -> None:
    await conn.execute(
        """UPDATE orgs.pin_groups SET name = $3, display_order = $4, collapsed = $5
            WHERE org_id = $1 AND id = $2""",
        org_id,
        group.id,
        group.name,
        group.display_order,
        group.collapsed,
    )


async def delete_group(conn: Conn, org_id: int, group_id: int) -> Group | None:
    """The deleted group, or None; its pins move to no group (the foreign key sets it null)."""
    row = await conn.fetchrow(
        f"DELETE FROM orgs.pin_groups WHERE org_id = $1 AND id = $2 RETURNING {_COLUMNS}",
        org_id,
        group_id,
    )
    return Group(**dict(row)) if row else None
