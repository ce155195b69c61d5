"""Writes to pinned repositories: pin, unpin, reorder. Each runs in one transaction that also
writes its event, and translates constraint violations into the answers docs/orgs.md "Endpoints"
gives."""

from __future__ import annotations

import asyncpg
from forge_common.accounts.queries import repository_by_name
from forge_common.db import Conn
from forge_common.errors import RepoNotFound, Unprocessable
from forge_common.names import is_repo_name

from ..events import emit_org_event
from ..groups import queries as groups_db
from ..models import Org, Pin
from ..payloads import AddPin
from . import queries as pins_db
from .queries import PinOrder

ALREADY_PINNED = "Repository is already pinned"


def _no_group(field: str) -> Unprocessable:
    return Unprocessable(f"{field} names no pinned group of this organization", field=field)


async def _repo_id(conn: Conn, org: Org, name: str) -> tuple[int, str]:
    repo = await repository_by_name(conn, org.id, name) if is_repo_name(name) else None
    if repo is None:
        raise RepoNotFound()
    return repo.id, repo.name


async def pin(conn: Conn, org: Org, actor_id: int, option: AddPin) -> Pin:
    """Pin a repository of the organization; two racing pins of one repository meet the unique
    constraint, and the loser is told it is already pinned (never a 500)."""
    repo_id, repo_name = await _repo_id(conn, org, option.repo_name)
    try:
        async with conn.transaction():
            if option.group_id is not None and not await groups_db.existing_group_ids(
                conn, org.id, [option.group_id]
            ):
                raise _no_group("group_id")
            pin_id = await pins_db.insert_pin(
                conn, org.id, repo_id, option.group_id, option.display_order
            )
            await emit_org_event(
                conn,
                "org.pin.created",
                org,
                actor_id,
                {
                    "pin_id": pin_id,
                    "repo_id": repo_id,
                    "repo": repo_name,
                    "group_id": option.group_id or 0,
                    "display_order": option.display_order,
                },
                repo_id=repo_id,
            )
    except asyncpg.UniqueViolationError:
        raise Unprocessable(ALREADY_PINNED, field="repo_name") from None
    except asyncpg.ForeignKeyViolationError:
        # the repository was deleted after we looked it up (the group is share-locked above)
        raise RepoNotFound() from None
    created = await pins_db.pin_by_id(conn, pin_id)
    if created is None:  # unpinned or transferred between our commit and this read
        raise RepoNotFound()
    return created


async def unpin(conn: Conn, org: Org, actor_id: int, repo_name: str) -> None:
    """Unpin; a repository of the organization that is not pinned is a no-op
    (docs/orgs.md "Decisions")."""
    repo_id, name = await _repo_id(conn, org, repo_name)
    async with conn.transaction():
        pin_id = await pins_db.delete_pin(conn, org.id, repo_id)
        if pin_id is not None:
            await emit_org_event(
                conn,
                "org.pin.deleted",
                org,
                actor_id,
                {"pin_id": pin_id, "repo_id": repo_id, "repo": name},
                repo_id=repo_id,
            )


async def reorder(conn: Conn, org: Org, actor_id: int, orders: list[PinOrder]) -> None:
    """Apply every entry or none: an entry naming a repository not pinned here, or a group not
    of this organization, is 422 and the transaction rolls back."""
    if not orders:
        return
    async with conn.transaction():
        # Groups before pins, the order a group delete takes them in (group row, then its pins
        # through the foreign key), so the two never wait on each other in a cycle.
        wanted = {o.group_id for o in orders if o.group_id is not None}
        found = await groups_db.existing_group_ids(conn, org.id, sorted(wanted))
        pinned = await pins_db.lock_pinned(conn, org.id, [o.repo_id for o in orders])
        for index, order in enumerate(orders):
            if order.repo_id not in pinned:
                field = f"orders[{index}].repo_id"
                raise Unprocessable(
                    f"{field} names a repository not pinned in this organization", field=field
                )
            if order.group_id is not None and order.group_id not in found:
                raise _no_group(f"orders[{index}].group_id")
        if await pins_db.apply_orders(conn, org.id, orders):
            await emit_org_event(
                conn,
                "org.pins.reordered",
                org,
                actor_id,
                {
                    "orders": [
                        {
                            "repo_id": o.repo_id,
                            "group_id": o.group_id or 0,
                            "display_order": o.display_order,
                        }
                        for o in orders
                    ]
                },
            )
