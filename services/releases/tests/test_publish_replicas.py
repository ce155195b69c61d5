"""Publishing with two running replicas on one database: a change made through instance A is seen
by the update check and the list of instance B, whose cache held the old answer (the
cache is invalidated by the triggers' NOTIFY, read/cache.py and forge_common.notifications)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_common.keys import NOTIFICATIONS
from forge_releases.keys import RELEASE_CACHE
from forge_releases.service import create_app
from forge_testing.waiting import eventually

from .publish_support import api, auth, publish_world
from .support import FAST

Client = TestClient[Any, Any]
CHECK = f"{api('owner/pub')}/update?version=1.0.0&platform=linux&arch=x64"


async def replica(settings: Settings, aiohttp_client: Any) -> Client:
    app = create_app(settings, notifications=FAST)
    client: Client = await aiohttp_client(app)
    await asyncio.wait_for(app[NOTIFICATIONS].listening.wait(), 10)
    return client


async def test_publish_on_a_is_seen_by_update_check_and_list_on_b(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(publish_world())
    a = await replica(settings, aiohttp_client)
    b = await replica(settings, aiohttp_client)
    # B answers from its cache: nothing newer than 1.0.0 yet
    assert (await b.get(CHECK)).status == 204
    assert (await b.get(CHECK)).status == 204
    pub = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'pub'")
    assert b.app[RELEASE_CACHE].get_repo(pub) is not None  # cached

    resp = await a.post(
        api("owner/pub"), json={"tag_name": "v1.1.0", "draft": True}, headers=auth("writer")
    )
    rid = (await resp.json())["id"]
    data = b"linux build 1.1.0"
    up = await a.post(
        f"{api('owner/pub')}/{rid}/assets?name=App-1.1.0.AppImage",
        data=data,
        headers=auth("writer"),
    )
    assert up.status == 201
    # still a draft: B keeps answering 204
    assert (await b.get(CHECK)).status == 204
    await a.patch(f"{api('owner/pub')}/{rid}", json={"draft": False}, headers=auth("writer"))

    async def b_sees_it() -> bool:
        resp = await b.get(CHECK)
        return resp.status == 200 and (await resp.json())["name"] == "v1.1.0"

    await eventually(b_sees_it)
    answer = await (await b.get(CHECK)).json()
    assert (
        answer["url"] == "http://forge.test/owner/pub/releases/download/v1.1.0/App-1.1.0.AppImage"
    )
    listed = await (await b.get(api("owner/pub"))).json()
    assert listed[0]["tag_name"] == "v1.1.0"
    download = await b.get("/owner/pub/releases/download/v1.1.0/App-1.1.0.AppImage")
    assert await download.read() == data

    # deleting through A: B's check goes back to 204
    assert (await a.delete(f"{api('owner/pub')}/{rid}", headers=auth("owner"))).status == 204

    async def b_forgot_it() -> bool:
        return (await b.get(CHECK)).status == 204

    await eventually(b_forgot_it)


async def test_the_writing_instance_sees_its_own_change_immediately(
    settings: Settings, aiohttp_client: Any, load: Any
) -> None:
    """No wait for the notification on the instance that made the change."""
    await load(publish_world())
    a = await replica(settings, aiohttp_client)
    assert (await a.get(CHECK)).status == 204
    resp = await a.post(api("owner/pub"), json={"tag_name": "v1.2.0"}, headers=auth("writer"))
    rid = (await resp.json())["id"]
    await a.post(
        f"{api('owner/pub')}/{rid}/assets?name=App.AppImage", data=b"x", headers=auth("writer")
    )
    resp = await a.get(CHECK)
    assert resp.status == 200 and (await resp.json())["name"] == "v1.2.0"
