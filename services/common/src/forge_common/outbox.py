"""The outbox: an event is written in the caller's transaction, so it exists exactly when the
change it describes was committed. A relay sends rows to the gateway (docs/events.md)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import asyncpg

# emit() NOTIFYs this channel so the relay (relay.py) wakes as soon as the change commits.
NOTIFY_CHANNEL = "forge_outbox"

EVENT_TYPES = frozenset(
    {
        "release.created",
        "release.published",
        "release.updated",
        "release.deleted",
        "release.asset.uploaded",
        "release.asset.deleted",
        "release.rollout.changed",
        "org.pin.created",
        "org.pin.deleted",
        "org.pins.reordered",
        "org.pin_group.created",
        "org.pin_group.updated",
        "org.pin_group.deleted",
        "org.member.publicized",
        "org.member.concealed",
        "org.created",
        "org.member.added",
        "org.member.removed",
        "team.created",
        "team.member.added",
        "team.member.removed",
        "repository.created",
        "repository.updated",
        "repository.deleted",
        "repository.collaborator.added",
        "repository.collaborator.removed",
        "audit.recorded",
    }
)


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    source: str
    payload: Mapping[str, Any]
    repo_id: int | None = None
    org_id: int | None = None
    actor_id: int | None = None
    id: uuid.UUID = field(default_factory=uuid.uuid4)

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {self.type!r}")


async def emit(conn: asyncpg.Connection[Any], event: Event) -> None:
    """Record `event` in the current transaction; the caller must be inside one.

    The same statement NOTIFYs NOTIFY_CHANNEL: PostgreSQL delivers it only at commit (never for
    a rolled-back change) and folds identical notifications of one transaction into one, so a
    transaction emitting many events wakes the relay once, with no extra round trip."""
    if not conn.is_in_transaction():
        raise RuntimeError("emit() must run inside the transaction that makes the change")
    await conn.execute(
        """WITH added AS (
               INSERT INTO core.outbox (id, type, source, repo_id, org_id, actor_id, payload)
               VALUES ($1, $2, $3, $4, $5, $6, $7)
               RETURNING 1)
           SELECT pg_notify($8, '') FROM added""",
        event.id,
        event.type,
        event.source,
        event.repo_id,
        event.org_id,
        event.actor_id,
        dict(event.payload),
        NOTIFY_CHANNEL,
    )
