"""Withdrawing a release (safety/withdraw.py, docs/release-safety.md): its audit entry lands with
it; another replica's update check, list and latest stop offering it as soon as the notification
arrives (the same invalidation as a publish); its files stay downloadable by direct URL."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_common.keys import NOTIFICATIONS
from forge_releases.errors import DraftNotWithdrawable, ReleaseNotFound
from forge_releases.safety.withdraw import restore, withdraw
from forge_releases.service import create_app
from forge_testing.waiting import eventually

from .publish_support import api, auth, publish_world
from .support import FAST

Client = TestClient[Any, Any]
CHECK = f"{api('owner/pub')}/update?version=0.5.0&platform=darwin&arch=x64"


async def replica(settings: Settings, aiohttp_client: Any) -> Client:
    app = create_app(settings, notifications=FAST)
    client: Client = await aiohttp_client(app)
    await asyncio.wait_for(app[NOTIFICATIONS].listening.wait(), 10)
    return client


async def _release_id(db: Any, repo: str, tag: str) -> int:
    return int(
        await db.fetchval(
            "SELECT r.id FROM releases.releases r JOIN core.repositories p ON p.id = r.repo_id "
            "WHERE p.name = $1 AND r.tag = $2",
            repo,
            tag,
        )
    )


async def test_withdraw_stops_every_replica_offering_it_and_keeps_the_files(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(publish_world())
    b = await replica(settings, aiohttp_client)
    answer = await b.get(CHECK)
    assert answer.status == 200 and (await answer.json())["name"] == "v1.0.0"  # now cached
    rid = await _release_id(db, "pub", "v1.0.0")

    async with db.transaction():
        await withdraw(db, rid, " crashes on start ", actor="writer", source="api", request_id="r1")

    async def b_stopped_offering_it() -> bool:
        return (await b.get(CHECK)).status == 204

    await eventually(b_stopped_offering_it)
    assert await (await b.get(api("owner/pub"))).json() == []
    assert (await b.get(f"{api('owner/pub')}/latest")).status == 404
    # not published for readers; its publishers read it back, marked
    assert (await b.get(f"{api('owner/pub')}/v1.0.0", headers=auth("reader"))).status == 404
    mine = await (await b.get(f"{api('owner/pub')}/v1.0.0", headers=auth("writer"))).json()
    assert mine["withdrawn"] is True and mine["withdrawn_reason"] == "crashes on start"
    download = await b.get("/owner/pub/releases/download/v1.0.0/App-1.0.0-x64.zip")
    assert download.status == 200 and await download.read() == b"one"

    entry = await db.fetchrow("SELECT * FROM core.audit_log")
    assert (entry["actor"], entry["kind"], entry["target"]) == (
        "writer",
        "release.withdrawn",
        "owner/pub@v1.0.0",
    )
    assert entry["changes"] == {
        "withdrawn": {"before": False, "after": True},
        "withdrawn_reason": {"before": "", "after": "crashes on start"},
    }
    assert (entry["source"], entry["request_id"]) == ("api", "r1")

    async with db.transaction():
        await restore(db, rid, actor="writer", source="api", request_id="r2")

    async def b_offers_it_again() -> bool:
        return (await b.get(CHECK)).status == 200

    await eventually(b_offers_it_again)
    kinds = await db.fetch("SELECT kind FROM core.audit_log ORDER BY id")
    assert [row["kind"] for row in kinds] == ["release.withdrawn", "release.restored"]


async def test_withdrawing_twice_with_the_same_reason_writes_once(load: Any, db: Any) -> None:
    await load(publish_world())
    rid = await _release_id(db, "pub", "v1.0.0")
    for _ in range(2):
        async with db.transaction():
            await withdraw(db, rid, "bad", actor="writer", source="cli", request_id=None)
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 1


async def test_a_draft_or_a_missing_release_is_refused(load: Any, db: Any) -> None:
    await load(publish_world())
    rid = await _release_id(db, "pub", "v1.0.0")
    await db.execute("UPDATE releases.releases SET draft = true WHERE id = $1", rid)
    with pytest.raises(DraftNotWithdrawable):
        async with db.transaction():
            await withdraw(db, rid, "", actor="writer", source="api", request_id=None)
    with pytest.raises(ReleaseNotFound):
        async with db.transaction():
            await withdraw(db, 10**12, "", actor="writer", source="api", request_id=None)
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 0
