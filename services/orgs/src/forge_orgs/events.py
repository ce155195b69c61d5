"""The `org.*` events (docs/events.md), written to the outbox in the transaction of the change.

Payloads are flat, as documented for plugin authors in proto/plugin/v1/EVENTS.md; every one
carries `org_id` and `org` (the envelope also carries org_id, repo_id where one repository is
concerned, and actor_id):
    org.pin.created         {pin_id, repo_id, repo, group_id, display_order}
    org.pin.deleted         {pin_id, repo_id, repo}
    org.pins.reordered      {orders: [{repo_id, group_id, display_order}]}   (as applied)
    org.pin_group.created   {group_id, name, display_order, collapsed}
    org.pin_group.updated   {group_id, name, display_order, collapsed (new values), changed}
    org.pin_group.deleted   {group_id, name, display_order, collapsed (as it was)}
    org.member.publicized   {user_id, login}
    org.member.concealed    {user_id, login}
A group id of 0 means no group. An event is written only when something changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_common.db import Conn
from forge_common.outbox import Event, emit

from .models import Group, Org

SOURCE = "orgs"


def group_fields(group: Group) -> dict[str, Any]:
    return {
        "group_id": group.id,
        "name": group.name,
        "display_order": group.display_order,
        "collapsed": group.collapsed,
    }


async def emit_org_event(
    conn: Conn,
    event_type: str,
    org: Org,
    actor_id: int,
    payload: Mapping[str, Any],
    *,
    repo_id: int | None = None,
) -> None:
    event = Event(
        type=event_type,
        source=SOURCE,
        payload={"org_id": org.id, "org": org.name, **payload},
        repo_id=repo_id,
        org_id=org.id,
        actor_id=actor_id,
    )
    await emit(conn, event)
