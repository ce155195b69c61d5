"""Parsing an ingest body: `{"events": [envelope, ...]}`, each envelope checked field by field.

Whatever could not be stored or delivered later is refused now, naming the field (422).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from forge_common.errors import InvalidInput, Unprocessable
from google.protobuf import struct_pb2

from .models import IncomingEvent

_MAX_TEXT = 200
# A protobuf Struct takes two message levels per JSON level, and parsers stop at 100 levels.
MAX_PAYLOAD_DEPTH = 32
_INT64 = (-(2**63), 2**63 - 1)


def parse_batch(body: bytes, max_events: int) -> list[IncomingEvent]:
    """The events of an ingest body; 400 for malformed JSON, 422 naming the bad field."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise InvalidInput("Malformed JSON body") from None
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise Unprocessable('The body must be {"events": [...]}', field="events")
    items = data["events"]
    if len(items) > max_events:
        raise Unprocessable(f"At most {max_events} events per request", field="events")
    # JSON writes a NUL only as the escape \u0000: a body without one has no NUL anywhere, and
    # its payloads need not be encoded again one by one to look (a tenth of the ingest's CPU).
    may_hold_nul = b"\\u0000" in body
    return [_event(item, f"events[{index}]", may_hold_nul) for index, item in enumerate(items)]


def _event(item: Any, where: str, may_hold_nul: bool = True) -> IncomingEvent:
    if not isinstance(item, dict):
        raise Unprocessable("An event must be an object", field=where)
    try:
        event_id = uuid.UUID(str(item.get("id")))
    except ValueError:
        raise Unprocessable("id must be a UUID", field=f"{where}.id") from None
    # Field by field in this order: the first bad one is the one named (422).
    event_type = _text(item, "type", where)
    source = _text(item, "source", where)
    occurred_at = _moment(item.get("occurred_at"), f"{where}.occurred_at")
    repo_id = _optional_int(item, "repo_id", where)
    org_id = _optional_int(item, "org_id", where)
    actor_id = _optional_int(item, "actor_id", where)
    payload, struct = _payload(item.get("payload", {}), f"{where}.payload", may_hold_nul)
    return IncomingEvent(
        id=event_id,
        type=event_type,
        source=source,
        occurred_at=occurred_at,
        repo_id=repo_id,
        org_id=org_id,
        actor_id=actor_id,
        payload=payload,
        payload_struct=struct,
    )


def _text(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value or len(value) > _MAX_TEXT or "\x00" in value:
        raise Unprocessable(f"{key} must be a non-empty string", field=f"{where}.{key}")
    return value


def _optional_int(item: Mapping[str, Any], key: str, where: str) -> int | None:
    value = item.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not (_INT64[0] <= value <= _INT64[1])
    ):
        raise Unprocessable(f"{key} must be an integer or null", field=f"{where}.{key}")
    return value


def _moment(value: Any, field: str) -> datetime:
    if not isinstance(value, str):
        raise Unprocessable("occurred_at must be an RFC 3339 time", field=field)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Unprocessable("occurred_at must be an RFC 3339 time", field=field) from None
    if moment.tzinfo is None:
        raise Unprocessable("occurred_at needs a time zone", field=field)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # e.g. year 1 with a positive offset
        raise Unprocessable("occurred_at is out of range", field=field) from None


def _payload(
    value: Any, field: str, may_hold_nul: bool = True
) -> tuple[Mapping[str, Any], struct_pb2.Struct]:
    """The payload, and the Struct a PluginEvent carries it in: building it is the check that a
    plugin can receive it, and a delivery leased at ingest sends it as built here."""
    if not isinstance(value, dict):
        raise Unprocessable("payload must be an object", field=field)
    if _depth(value) > MAX_PAYLOAD_DEPTH:
        raise Unprocessable(f"payload nests deeper than {MAX_PAYLOAD_DEPTH} levels", field=field)
    if may_hold_nul and b"\\u0000" in orjson.dumps(value):  # PostgreSQL text cannot hold NUL
        raise Unprocessable("payload must not contain NUL characters", field=field)
    struct = struct_pb2.Struct()
    try:
        struct.update(value)  # refuse now what could not be delivered later
    except (ValueError, TypeError):
        raise Unprocessable("payload holds a value a plugin cannot receive", field=field) from None
    return value, struct


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value (a scalar inside an object is one level deeper), without
    recursion (the value may be very deep); stops counting past MAX_PAYLOAD_DEPTH. Level by
    level: a flat payload costs one pass over its values, not a stack entry per value."""
    depth, level = 1, [value]  # the containers at `depth`
    while level and depth <= MAX_PAYLOAD_DEPTH:
        children = [
            child for item in level for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not children:
            break
        depth += 1
        level = [child for child in children if isinstance(child, dict | list)]
    return depth
