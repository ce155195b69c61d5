"""The account events (docs/events.md "Event types"): repository.*, org.created, org.member.*,
team.*, each written in the transaction of its change. Payloads are flat and name what they
concern by id and by name, as the other events do (proto/plugin/v1/EVENTS.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..db import Conn
from ..outbox import Event, emit

SOURCE = "core"


async def record(
    conn: Conn,
    event_type: str,
    payload: Mapping[str, Any],
    *,
    actor_id: int | None,
    repo_id: int | None = None,
    org_id: int | None = None,
) -> None:
    await emit(
        conn,
        Event(
            type=event_type,
            source=SOURCE,
            payload=dict(payload),
            repo_id=repo_id,
            org_id=org_id,
            actor_id=actor_id,
        ),
    )
