"""Writes to pinned groups: create, update (only supplied fields), delete (pins move to no
group). Each runs in one transaction with its event; nothing is written when nothing changes."""

from __future__ import annotations

from dataclasses import replace

from forge_common.db import Conn

from ..errors import PinGroupNotFound
from ..events import emit_org_event, group_fields
from ..models import Group, Org
from ..payloads import CreateGroup, UpdateGroup
from . import queries as groups_db


async def create(conn: Conn, org: Org, actor_id: int, option: CreateGroup) -> Group:
    async with conn.transaction():
        group = await groups_db.insert_group(
            conn, org.id, option.name, option.display_order, option.collapsed
        )
        await emit_org_event(conn, "org.pin_group.created", org, actor_id, group_fields(group))
    return group


async def update(conn: Conn, org: Org, actor_id: int, group_id: int, option: UpdateGroup) -> Group:
    async with conn.transaction():
        current = await groups_db.lock_group(conn, org.id, group_id)
        if current is None:
            raise PinGroupNotFound()
        updated = replace(
            current,
            name=current.name if option.name is None else option.name,
            display_order=(
                current.display_order if option.display_order is None else option.display_order
            ),
            collapsed=current.collapsed if option.collapsed is None else option.collapsed,
        )
        changed = [
            field
            for field in ("name", "display_order", "collapsed")
            if getattr(current, field) != getattr(updated, field)
        ]
        if changed:
            await groups_db.save_group(conn, org.id, updated)
            await emit_org_event(
                conn,
                "org.pin_group.updated",
                org,
                actor_id,
                {**group_fields(updated), "changed": changed},
            )
    return updated


async def delete(conn: Conn, org: Org, actor_id: int, group_id: int) -> None:
    async with conn.transaction():
        group = await groups_db.delete_group(conn, org.id, group_id)
        if group is None:
            raise PinGroupNotFound()
        await emit_org_event(conn, "org.pin_group.deleted", org, actor_id, group_fields(group))
