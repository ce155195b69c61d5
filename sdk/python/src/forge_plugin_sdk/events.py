"""Events delivered through OnEvent, as typed Python objects.

Event types and payloads are documented in proto/plugin/v1/EVENTS.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2
from plugin.v1 import plugin_pb2

#: Every event type the forge emits (docs/events.md "Event types"), in a stable order.
EVENT_TYPES: tuple[str, ...] = (
    "release.created",
    "release.published",
    "release.updated",
    "release.deleted",
    "release.asset.uploaded",
    "release.asset.deleted",
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
    "release.rollout.changed",
)

# gRPC metadata keys the gateway sends with OnEvent (always lower case on the wire).
EVENT_ID_KEY = "x-event-id"
DELIVERY_ID_KEY = "x-delivery-id"
ATTEMPT_KEY = "x-attempt"


@dataclass(frozen=True, slots=True)
class Event:
    """One delivered event.

    ``id`` is stable across retries and replays: deduplicate on it. It is
    empty when the caller sent no ``x-event-id`` metadata (a test client, say).
    """

    type: str
    payload: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime | None = None
    repo_id: int = 0
    org_id: int = 0
    id: str = ""
    delivery_id: str = ""
    attempt: int = 0


def event_from_proto(
    message: plugin_pb2.PluginEvent, metadata: Iterable[tuple[str, str | bytes]]
) -> Event:
    """Build an :class:`Event` from the wire message and the call's metadata."""
    meta: dict[str, str] = {}
    for key, value in metadata:
        meta.setdefault(
            key.lower(), value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        )
    try:
        attempt = int(meta.get(ATTEMPT_KEY, "0"))
    except ValueError:
        attempt = 0
    timestamp = message.timestamp.ToDatetime(tzinfo=UTC) if message.HasField("timestamp") else None
    return Event(
        type=message.event_type,
        payload=struct_to_dict(message.payload),
        timestamp=timestamp,
        repo_id=message.repo_id,
        org_id=message.org_id,
        id=meta.get(EVENT_ID_KEY, ""),
        delivery_id=meta.get(DELIVERY_ID_KEY, ""),
        attempt=attempt,
    )


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """Convert a Struct to plain Python values.

    A Struct has only doubles, so ids would arrive as ``12.0``; a whole number
    becomes an ``int`` because every numeric field of the forge's payloads is
    an id, a count or a position.
    """
    return {key: _value(value) for key, value in struct.fields.items()}


def _value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return struct_to_dict(value.struct_value)
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None
