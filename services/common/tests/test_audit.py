"""The audit log (docs/audit.md): an entry is written in the caller's transaction with its outbox
event, or not at all; it is append-only; secret fields are refused; readers page and filter it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from forge_common import audit
from forge_common.audit import Filters, queries


async def _record(db, **overrides):
    fields = {
        "actor": "alice",
        "kind": "release.withdrawn",
        "target": "acme/app@v1.2.0",
        "changes": {"withdrawn": (False, True)},
        "source": "api",
        "request_id": "req-1",
        "repo_id": 7,
    }
    fields.update(overrides)
    async with db.transaction():
        await audit.record(db, **fields)


async def test_an_entry_and_its_event_are_written_together(db):
    await _record(db)
    row = await db.fetchrow("SELECT * FROM core.audit_log")
    assert row["actor"] == "alice" and row["kind"] == "release.withdrawn"
    assert row["changes"] == {"withdrawn": {"before": False, "after": True}}
    assert (row["request_id"], row["source"], row["repo_id"]) == ("req-1", "api", 7)
    event = await db.fetchrow("SELECT type, repo_id, payload FROM core.outbox")
    assert event["type"] == "audit.recorded" and event["repo_id"] == 7
    assert event["payload"]["id"] == row["id"]
    assert event["payload"]["changes"] == row["changes"]


async def test_a_rolled_back_change_leaves_no_entry_nor_event(db):
    with pytest.raises(ZeroDivisionError):
        async with db.transaction():
            await audit.record(
                db,
                actor=None,
                kind="release.required",
                target="acme/app@v1.5.0",
                changes={"required": (False, True)},
                source="system",
                request_id=None,
            )
            _ = 1 / 0
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 0
    assert await db.fetchval("SELECT count(*) FROM core.outbox") == 0


async def test_record_refuses_to_run_outside_a_transaction(db):
    with pytest.raises(RuntimeError, match="inside the transaction"):
        await audit.record(
            db, actor="a", kind="x.y", target="t", changes={}, source="api", request_id=None
        )


@pytest.mark.parametrize("field", ["password", "token", "Secret", "private_key"])
async def test_secret_fields_are_never_recorded(db, field):
    with pytest.raises(ValueError, match="never audited"):
        await _record(db, changes={field: (None, "hunter2")})
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 0


async def test_unknown_sources_are_refused(db):
    with pytest.raises(ValueError, match="source"):
        await _record(db, source="carrier-pigeon")


async def test_a_plugin_is_a_source_named_after_it(db):
    """`plugin:NAME` (a plugin's release health figures); the table refuses any other text."""
    await _record(db, actor=None, source=audit.plugin_source("crash-figures"))
    assert await db.fetchval("SELECT source FROM core.audit_log") == "plugin:crash-figures"
    for bad in ("plugin:", "plugin:-x", "plugin:a b", "plugins:x"):
        with pytest.raises(ValueError, match="source"):
            await _record(db, source=bad)
        with pytest.raises(asyncpg.CheckViolationError):
            await db.execute(
                "INSERT INTO core.audit_log (kind, target, source) VALUES ('x.y', 't', $1)", bad
            )
    with pytest.raises(ValueError, match="not a plugin name"):
        audit.plugin_source("a b")


async def test_the_log_is_append_only(db):
    await _record(db)
    with pytest.raises(asyncpg.RaiseError, match="append-only"):
        await db.execute("UPDATE core.audit_log SET actor = 'mallory'")


async def test_pages_newest_first_with_filters(db):
    await _record(db, actor="alice", kind="release.withdrawn")
    await _record(db, actor="bob", kind="token.created", repo_id=None, target="user bob")
    await _record(db, actor="Alice", kind="release.critical", repo_id=8)
    everything = await queries.page(db, Filters(), limit=10, offset=0)
    kinds = [e.kind for e in everything]
    assert kinds == ["release.critical", "token.created", "release.withdrawn"]
    alice = await queries.page(db, Filters(actor="alice"), limit=10, offset=0)
    assert [e.repo_id for e in alice] == [8, 7]
    releases = await queries.page(db, Filters(kind="release"), limit=1, offset=1)
    assert [e.kind for e in releases] == ["release.withdrawn"]
    assert await queries.count(db, Filters(kind="release")) == 2
    assert await queries.count(db, Filters(repo_id=7)) == 1
    future = datetime.now(UTC) + timedelta(minutes=1)
    assert await queries.count(db, Filters(since=future)) == 0


async def test_retention_deletes_whole_old_entries(db):
    await _record(db)
    assert await queries.delete_older_than(db, datetime.now(UTC) - timedelta(days=1)) == 0
    assert await queries.delete_older_than(db, datetime.now(UTC) + timedelta(days=1)) == 1


def test_changes_between_keeps_the_fields_that_differ():
    assert audit.changes_between({"a": 1, "b": 2}, {"a": 1, "b": 3, "c": 4}) == {
        "b": (2, 3),
        "c": (None, 4),
    }
