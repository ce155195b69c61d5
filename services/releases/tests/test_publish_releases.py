"""Publishing API, releases: create (POST), edit (PATCH), delete (DELETE), their events, bad input.

201 on create and 409 when the tag exists (also under a race); only the given fields
change; delete takes the assets along; each change emits its event in the same transaction, and
a failed write emits nothing.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.service import create_app

from .publish_support import api, auth, outbox, publish_world, stored_files

Client = TestClient[Any, Any]


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any, load: Any) -> Client:
    await load(publish_world())
    result: Client = await aiohttp_client(create_app(settings))
    return result


async def create(client: Client, repo: str = "owner/pub", caller: str = "writer", **body: Any):  # type: ignore[no-untyped-def]
    return await client.post(api(repo), json=body, headers=auth(caller))


async def test_create_release_201_with_the_release_and_its_events(client: Client, db: Any) -> None:
    resp = await create(
        client,
        tag_name="v2.0.0",
        name="Two",
        body="Notes",
        target_commitish="main",
        prerelease=True,
    )
    assert resp.status == 201, await resp.text()
    release = await resp.json()
    assert release["tag_name"] == "v2.0.0"
    assert (release["name"], release["body"], release["target_commitish"]) == (
        "Two",
        "Notes",
        "main",
    )
    assert release["draft"] is False and release["prerelease"] is True
    assert release["assets"] == []
    assert release["published_at"] == release["created_at"]
    assert resp.headers["Location"].endswith(f"/api/v2/repos/owner/pub/releases/{release['id']}")
    # readable at once
    got = await client.get(f"{api('owner/pub')}/v2.0.0")
    assert got.status == 200 and (await got.json())["id"] == release["id"]

    events = await outbox(db)
    assert [e["type"] for e in events] == ["release.created", "release.published"]
    writer_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'writer'")
    repo_id = await db.fetchval("SELECT id FROM core.repositories WHERE name = 'pub'")
    for event in events:
        assert event["source"] == "releases"
        assert (event["repo_id"], event["org_id"], event["actor_id"]) == (repo_id, None, writer_id)
        assert event["payload"] == {
            "repo_id": repo_id,
            "owner": "owner",
            "repo": "pub",
            "full_name": "owner/pub",
            "release_id": release["id"],
            "tag": "v2.0.0",
            "title": "Two",
            "draft": False,
            "prerelease": True,
            "actor_id": writer_id,
        }


async def test_create_draft_emits_created_but_not_published(client: Client, db: Any) -> None:
    resp = await create(client, tag_name="v3.0.0", draft=True)
    assert resp.status == 201
    assert (await resp.json())["draft"] is True
    assert [e["type"] for e in await outbox(db)] == ["release.created"]
    # a draft is not shown to anonymous readers
    assert (await client.get(f"{api('owner/pub')}/v3.0.0")).status == 404


async def test_create_in_organization_repository_sets_org_id(client: Client, db: Any) -> None:
    resp = await create(client, "acme/app", "orgwriter", tag_name="v1")
    assert resp.status == 201
    org_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'acme'")
    assert {e["org_id"] for e in await outbox(db)} == {org_id}


async def test_create_existing_tag_is_409_and_emits_nothing(client: Client, db: Any) -> None:
    resp = await create(client, tag_name="v1.0.0")
    assert resp.status == 409
    body = await resp.json()
    assert body["error"]["code"] == "Conflict" and "v1.0.0" in body["error"]["message"]
    assert await outbox(db) == []


async def test_create_on_a_bare_tag_turns_it_into_a_release(client: Client) -> None:
    resp = await create(client, tag_name="v0.1.0", name="Zero one")
    assert resp.status == 201
    listed = await (await client.get(api("owner/pub"))).json()
    assert [r["tag_name"] for r in listed] == ["v0.1.0", "v1.0.0"]


async def test_racing_creates_of_one_tag_give_one_201_and_one_409(client: Client, db: Any) -> None:
    results = await asyncio.gather(*(create(client, tag_name="v9.9.9") for _ in range(6)))
    assert sorted(r.status for r in results) == [201] + [409] * 5
    assert await db.fetchval("SELECT count(*) FROM releases.releases WHERE tag = 'v9.9.9'") == 1
    assert len(await outbox(db)) == 2  # created + published, once


BAD_BODIES: list[tuple[dict[str, Any], str]] = [
    ({}, "tag_name"),
    ({"tag_name": ""}, "tag_name"),
    ({"tag_name": "   "}, "tag_name"),
    ({"tag_name": "v1 .0"}, "tag_name"),
    ({"tag_name": "v1\t"}, "tag_name"),
    ({"tag_name": "v1\x00"}, "tag_name"),
    ({"tag_name": "v1\x7f"}, "tag_name"),
    ({"tag_name": "v" * 256}, "tag_name"),
    ({"tag_name": 5}, "tag_name"),
    ({"tag_name": "."}, "tag_name"),
    ({"tag_name": ".."}, "tag_name"),
    ({"tag_name": "v5", "draft": "yes"}, "draft"),
    ({"tag_name": "v5", "prerelease": 1}, "prerelease"),
    ({"tag_name": "v5", "name": ["x"]}, "name"),
    ({"tag_name": "v5", "body": {"a": 1}}, "body"),
    ({"tag_name": "v5", "target_commitish": False}, "target_commitish"),
    ({"tag_name": "v5", "body": "nul \x00 inside"}, "body"),
    ({"tag_name": "v5", "name": "n" * 256}, "name"),
    # a release title is a display name (forge_common.names): nothing hidden in it
    ({"tag_name": "v5", "name": "bell \x07"}, "name"),
    ({"tag_name": "v5", "name": "\u202eexe.txt"}, "name"),
]


async def test_create_bad_input_is_422_naming_the_field(client: Client, db: Any) -> None:
    """Missing or empty tag, whitespace or control characters in it, wrong JSON types: 422."""
    for body, field in BAD_BODIES:
        resp = await create(client, **body)
        assert resp.status == 422, body
        error = (await resp.json())["error"]
        assert error["code"] == "ValidationFailed"
        assert field in error["message"], body
    assert await outbox(db) == []


async def test_create_malformed_json_is_400_or_422_never_500(client: Client) -> None:
    for raw in [b"{", b"[1, 2]", b'"text"', b"", b'{"tag_name": "\\ud800"}', b"\xff\xfe"]:
        resp = await client.post(
            api("owner/pub"),
            data=raw,
            headers={**auth("writer"), "Content-Type": "application/json"},
        )
        assert resp.status in (400, 422), raw


async def test_create_body_over_the_json_limit_is_413(client: Client) -> None:
    raw = orjson.dumps({"tag_name": "v5", "body": "x" * (2 * 1024 * 1024)})
    resp = await client.post(
        api("owner/pub"),
        data=io.BytesIO(raw),
        headers={**auth("writer"), "Content-Type": "application/json"},
    )
    assert resp.status == 413


# --- PATCH ---------------------------------------------------------------------------------


async def release_id(client: Client, tag: str, repo: str = "owner/pub") -> int:
    resp = await client.get(f"{api(repo)}/{tag}", headers=auth("owner"))
    return int((await resp.json())["id"])


async def test_patch_changes_only_the_given_fields(client: Client, db: Any) -> None:
    rid = await release_id(client, "v1.0.0")
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}",
        json={"name": "Uno", "prerelease": True},
        headers=auth("writer"),
    )
    assert resp.status == 200
    release = await resp.json()
    assert (release["name"], release["body"], release["tag_name"]) == ("Uno", "First", "v1.0.0")
    assert release["prerelease"] is True and release["draft"] is False
    assert [a["name"] for a in release["assets"]] == ["App-1.0.0-x64.zip"]
    [event] = await outbox(db)
    assert event["type"] == "release.updated"
    assert event["payload"]["changed"] == ["title", "prerelease"]
    assert event["payload"]["title"] == "Uno"


async def test_patch_without_a_change_writes_and_emits_nothing(client: Client, db: Any) -> None:
    rid = await release_id(client, "v1.0.0")
    before = await db.fetchval("SELECT updated_at FROM releases.releases WHERE id = $1", rid)
    for body in ({}, {"name": "One", "draft": False}, {"name": None}):
        resp = await client.patch(f"{api('owner/pub')}/{rid}", json=body, headers=auth("writer"))
        assert resp.status == 200
    assert await outbox(db) == []
    assert (
        await db.fetchval("SELECT updated_at FROM releases.releases WHERE id = $1", rid) == before
    )


async def test_publishing_a_draft_emits_updated_and_published(client: Client, db: Any) -> None:
    rid = (await (await create(client, tag_name="v4.0.0", draft=True)).json())["id"]
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"draft": False}, headers=auth("writer")
    )
    assert resp.status == 200
    types = [e["type"] for e in await outbox(db)]
    # the PATCH's two events share its transaction's moment (`outbox` orders them by type)
    assert types == ["release.created", "release.published", "release.updated"]
    # and it is visible to everyone now
    assert (await client.get(f"{api('owner/pub')}/v4.0.0")).status == 200
    # turning it back into a draft is an update only
    await client.patch(f"{api('owner/pub')}/{rid}", json={"draft": True}, headers=auth("writer"))
    assert [e["type"] for e in await outbox(db)][-1] == "release.updated"
    assert (await client.get(f"{api('owner/pub')}/v4.0.0")).status == 404


async def test_patch_tag_rename_and_conflicts(client: Client, db: Any) -> None:
    rid = (await (await create(client, tag_name="v5.0.0")).json())["id"]
    url = f"{api('owner/pub')}/{rid}"
    for taken in ("v1.0.0", "v0.1.0"):  # another release, a bare tag
        resp = await client.patch(url, json={"tag_name": taken}, headers=auth("writer"))
        assert resp.status == 409
    resp = await client.patch(url, json={"tag_name": "v5.0.1"}, headers=auth("writer"))
    assert resp.status == 200 and (await resp.json())["tag_name"] == "v5.0.1"
    assert (await outbox(db))[-1]["payload"]["changed"] == ["tag"]
    resp = await client.patch(url, json={"tag_name": "bad tag"}, headers=auth("writer"))
    assert resp.status == 422


async def test_patch_unknown_release_is_404(client: Client) -> None:
    for path in ["999999", "0", "-1", "abc", "v1.0.0", "99999999999999999999"]:
        resp = await client.patch(f"{api('owner/pub')}/{path}", json={}, headers=auth("writer"))
        assert resp.status == 404
        assert (await resp.json())["error"]["code"] == "ReleaseNotFound"


async def test_patch_a_bare_tag_is_404(client: Client, db: Any) -> None:
    bare = await db.fetchval("SELECT id FROM releases.releases WHERE tag = 'v0.1.0' LIMIT 1")
    resp = await client.patch(f"{api('owner/pub')}/{bare}", json={}, headers=auth("writer"))
    assert resp.status == 404


async def test_patch_release_of_another_repository_is_404(client: Client) -> None:
    other = await release_id(client, "v1.0.0", "owner/priv")
    resp = await client.patch(f"{api('owner/pub')}/{other}", json={}, headers=auth("writer"))
    assert resp.status == 404


async def test_patch_wrong_type_is_422_and_changes_nothing(client: Client, db: Any) -> None:
    rid = await release_id(client, "v1.0.0")
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}",
        json={"name": "Changed", "draft": "no"},
        headers=auth("writer"),
    )
    assert resp.status == 422 and "draft" in (await resp.json())["error"]["message"]
    assert await db.fetchval("SELECT title FROM releases.releases WHERE id = $1", rid) == "One"
    assert await outbox(db) == []


# --- DELETE --------------------------------------------------------------------------------


async def test_delete_release_204_takes_assets_and_files(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await release_id(client, "v1.0.0")
    # the same bytes in three repositories: stored once
    assert len(stored_files(settings.storage_path)) == 1
    resp = await client.delete(f"{api('owner/pub')}/{rid}", headers=auth("repoadmin"))
    assert resp.status == 204
    assert await resp.read() == b""
    assert (await client.get(f"{api('owner/pub')}/v1.0.0")).status == 404
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE release_id = $1", rid) == 0
    # the file is shared with the other repositories' v1.0.0: it stays
    assert len(stored_files(settings.storage_path)) == 1
    [event] = await outbox(db)
    assert event["type"] == "release.deleted"
    assert event["payload"]["tag"] == "v1.0.0" and event["payload"]["release_id"] == rid
    # deleting the last reference deletes the file
    await db.execute("UPDATE core.repositories SET archived = false")
    for repo in ("owner/priv", "owner/relpub", "owner/old"):
        other = await release_id(client, "v1.0.0", repo)
        assert (await client.delete(f"{api(repo)}/{other}", headers=auth("owner"))).status == 204
    assert stored_files(settings.storage_path) == []


async def test_delete_release_twice_is_404_the_second_time(client: Client, db: Any) -> None:
    rid = await release_id(client, "v1.0.0")
    assert (await client.delete(f"{api('owner/pub')}/{rid}", headers=auth("owner"))).status == 204
    resp = await client.delete(f"{api('owner/pub')}/{rid}", headers=auth("owner"))
    assert resp.status == 404
    assert len(await outbox(db)) == 1


async def test_archived_repository_refuses_writes_with_403(client: Client, db: Any) -> None:
    resp = await create(client, "owner/old", tag_name="v2")
    assert resp.status == 403
    assert "archived" in (await resp.json())["error"]["message"]
    assert await outbox(db) == []
