"""The outbox writes an event in the caller's transaction (or not at all); timestamps render as
RFC 3339 UTC whole seconds with `Z` (docs/http.md)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import orjson
import pytest
from forge_common.outbox import Event, emit
from forge_common.render import dumps, rfc3339


def event() -> Event:
    return Event("release.created", "releases", {"tag": "v1.0.0"}, repo_id=1, actor_id=2)


async def test_emit_writes_the_event_with_the_change(db):
    async with db.transaction():
        await emit(db, event())
    row = await db.fetchrow("SELECT type, source, repo_id, payload FROM core.outbox")
    assert dict(row) == {
        "type": "release.created",
        "source": "releases",
        "repo_id": 1,
        "payload": {"tag": "v1.0.0"},
    }


async def test_a_rolled_back_change_leaves_no_event(db):
    with pytest.raises(ZeroDivisionError):
        async with db.transaction():
            await emit(db, event())
            _ = 1 / 0
    assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0


async def test_emit_refuses_to_run_outside_a_transaction(db):
    with pytest.raises(RuntimeError, match="inside the transaction"):
        await emit(db, event())


def test_unknown_event_type_is_refused():
    with pytest.raises(ValueError, match="unknown event type"):
        Event("release.exploded", "releases", {})


def test_timestamps_are_utc_whole_seconds_with_z():
    moment = datetime(2026, 1, 2, 4, 4, 5, 999_999, tzinfo=timezone(timedelta(hours=1)))
    assert rfc3339(moment) == "2026-01-02T03:04:05Z"
    assert orjson.loads(dumps({"at": moment})) == {"at": "2026-01-02T03:04:05Z"}
    assert rfc3339(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05Z"  # naive = UTC


def test_event_types_agree_with_the_plugin_sdk_and_the_documentation():
    """The SDK cannot import forge_common (plugins install it alone), so it keeps its own list:
    this keeps the two lists and proto/plugin/v1/EVENTS.md the same."""
    import re
    from pathlib import Path

    from forge_common.outbox import EVENT_TYPES
    from forge_plugin_sdk import EVENT_TYPES as SDK_EVENT_TYPES

    events_md = Path(__file__).resolve().parents[3] / "proto" / "plugin" / "v1" / "EVENTS.md"
    documented = set(
        re.findall(
            r"^\| `((?:release|org|team|repository|audit)\.[a-z_.]+)` \|",
            events_md.read_text(),
            re.M,
        )
    )
    assert set(SDK_EVENT_TYPES) == set(EVENT_TYPES) == documented
