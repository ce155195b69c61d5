"""SQL for pinned repositories. Reads join the repository and its group in one query; a pin
whose repository no longer belongs to the organization is never returned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from forge_common.db import Conn

from ..models import Group, Pin, PinnedRepo

_PIN_SELECT = """
SELECT p.id, p.repo_id, p.group_id, p.display_order,
       r.name AS r_name, r.description AS r_description, r.private AS r_private,
       r.archived AS r_archived, r.created_at AS r_created_at, r.updated_at AS r_updated_at,
       g.name AS g_name, g.display_order AS g_display_order, g.collapsed AS g_collapsed
  FROM orgs.pins p
  JOIN core.repositories r ON r.id = p.repo_id AND r.owner_id = p.org_id
  LEFT JOIN orgs.pin_groups g ON g.id = p.group_id
"""


def pin_from_row(row: Any) -> Pin:
    """A pin from a row (or a JSON object) of the columns of `_PIN_SELECT`."""
    group = None
    if row["group_id"] is not None:
        group = Group(row["group_id"], row["g_name"], row["g_display_order"], row["g_collapsed"])
    repo = PinnedRepo(
        id=row["repo_id"],
        name=row["r_name"],
        description=row["r_description"],
        private=row["r_private"],
        archived=row["r_archived"],
        created_at=row["r_created_at"],
        updated_at=row["r_updated_at"],
    )
    return Pin(row["id"], row["repo_id"], row["group_id"], row["display_order"], repo, group)


async def list_pins(conn: Conn, org_id: int) -> list[Pin]:
    """Every pin of the organization, by display order then id (docs/http.md "Ordering")."""
    rows = await conn.fetch(
        _PIN_SELECT + " WHERE p.org_id = $1 ORDER BY p.display_order, p.id", org_id
    )
    return [pin_from_row(row) for row in rows]


async def pin_by_id(conn: Conn, pin_id: int) -> Pin | None:
    row = await conn.fetchrow(_PIN_SELECT + " WHERE p.id = $1", pin_id)
    return pin_from_row(row) if row else None


async def insert_pin(
    conn: Conn, org_id: int, repo_id: int, group_id: int | None, display_order: int
) -> int:
    """The new pin's id; raises asyncpg.UniqueViolationError when the repository is pinned."""
    pin_id: int = await conn.fetchval(
        """INSERT INTO orgs.pins (org_id, repo_id, group_id, display_order)
           VALUES ($1, $2, $3, $4) RETURNING id""",
        org_id,
        repo_id,
        group_id,
        display_order,
    )
    return pin_id


async def delete_pin(conn: Conn, org_id: int, repo_id: int) -> int | None:
    """The deleted pin's id, or None when the repository was not pinned."""
    pin_id: int | None = await conn.fetchval(
        "DELETE FROM orgs.pins WHERE org_id = $1 AND repo_id = $2 RETURNING id", org_id, repo_id
    )
    return pin_id


@dataclass(frozen=True, slots=True)
class PinOrder:
    """One entry of a reorder: where a pinned repository goes."""

    repo_id: int
    group_id: int | None
    display_order: int


async def lock_pinned(conn: Conn, org_id: int, repo_ids: Sequence[int]) -> set[int]:
    """Which of `repo_ids` are pinned in the organization, locking those pins until commit."""
    rows = await conn.fetch(
        """SELECT repo_id FROM orgs.pins WHERE org_id = $1 AND repo_id = ANY($2::bigint[])
           ORDER BY id FOR UPDATE""",
        org_id,
        list(repo_ids),
    )
    return {row["repo_id"] for row in rows}


async def apply_orders(conn: Conn, org_id: int, orders: Sequence[PinOrder]) -> int:
    """Set group and order of each entry; returns how many pins actually changed."""
    changed: int = await conn.fetchval(
        """WITH changed AS (
               UPDATE orgs.pins p
                  SET group_id = u.group_id, display_order = u.display_order
                 FROM unnest($2::bigint[], $3::bigint[], $4::integer[])
                      AS u(repo_id, group_id, display_order)
                WHERE p.org_id = $1 AND p.repo_id = u.repo_id
                  AND (p.group_id IS DISTINCT FROM u.group_id
                       OR p.display_order <> u.display_order)
            RETURNING 1)
           SELECT count(*) FROM changed""",
        org_id,
        [o.repo_id for o in orders],
        [o.group_id for o in orders],
        [o.display_order for o in orders],
    )
    return changed
