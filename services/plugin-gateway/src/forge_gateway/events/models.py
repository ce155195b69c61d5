"""Events as the gateway receives and delivers them.

The envelope (docs/events.md "The envelope"): `{id (uuid, stable across retries), type,
occurred_at, source, repo_id, org_id, actor_id, payload}`. A delivery turns one event into a
`PluginEvent` for one plugin.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from plugin.v1 import plugin_pb2

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class IncomingEvent:
    id: uuid.UUID
    type: str
    source: str
    occurred_at: datetime
    repo_id: int | None
    org_id: int | None
    actor_id: int | None
    payload: Mapping[str, Any]
    # The payload as a PluginEvent carries it, when already built (the ingest's check builds it)
    payload_struct: struct_pb2.Struct | None = None


def to_plugin_event(
    event_type: str,
    payload: Mapping[str, Any],
    occurred_at: datetime,
    repo_id: int | None,
    org_id: int | None,
    payload_struct: struct_pb2.Struct | None = None,
) -> plugin_pb2.PluginEvent:
    """The PluginEvent of a stored event; absent ids are 0, as the proto documents.
    `payload_struct`: the payload already built as a Struct (6 us of a small event's ~8 saved)."""
    struct = payload_struct
    if struct is None:
        struct = struct_pb2.Struct()
        struct.update(payload)
    # Seconds and nanoseconds from the epoch as integers, exact to the microsecond: what
    # Timestamp.FromDatetime computes, in a quarter of its time (it is pure Python: 4 us a call,
    # half of building a small event; docs/events.md "Drain").
    since = occurred_at - _EPOCH
    stamp = timestamp_pb2.Timestamp(
        seconds=since.days * 86400 + since.seconds, nanos=since.microseconds * 1000
    )
    return plugin_pb2.PluginEvent(
        event_type=event_type,
        payload=struct,
        timestamp=stamp,
        repo_id=repo_id or 0,
        org_id=org_id or 0,
    )
