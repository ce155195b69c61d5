"""The `org.*` events (DESIGN §6), written to the outbox in the transaction of the change.

Payloads (the envelope carries org_id, repo_id where one repository is concerned, and actor_id):
    org.pin.created         {org, pin: {id, repo_id, repo_name, group_id, display_order}}
    org.pin.deleted         {org, pin: {id, repo_id, repo_name}}
    org.pins.reordered      {org, orders: [{repo_id, group_id, display_order}]}   (as requested)
    org.pin_group.created   {org, group: {id, name, display_order, collapsed}}
    org.pin_group.updated   {org, group: {...as stored after the change}, changed: [field names]}
    org.pin_group.deleted   {org, group: {...as it was}}
    org.member.publicized   {org, user: {id, login}}
    org.member.concealed    {org, user: {id, login}}
A group id of 0 means no group. An event is written only when something changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forge_common.outbox import Event, emit

from .dbconn import Conn
from .models import Org

SOURCE = "orgs"


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
        payload={"org": org.name, **payload},
        repo_id=repo_id,
        org_id=org.id,
        actor_id=actor_id,
    )
    await emit(conn, event)
