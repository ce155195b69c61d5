"""Staged rollouts: a rollout percentage set through the publishing API (and raised by
PATCH), honoured by electron-updater's yml (`stagingPercentage`) and Squirrel.Windows RELEASES
(`# NN%`, with an unstaged full package kept for installs outside), withheld from Squirrel.Mac and
Tauri (no staging id) until it reaches 100, ignored by the spec's check."""

from __future__ import annotations

from typing import Any

from .support import TOKENS, UPDATE, one_repo

API = "/api/v2/repos/owner/app/releases"
FEEDS = f"{API}/feeds"
OWNER = {"Authorization": f"token {TOKENS['owner']}"}


def release(tag: str, minute: int, *names: str, **flags: Any) -> dict[str, Any]:
    return {
        "tag": tag,
        "created_at": f"2026-01-01T00:{minute:02d}:00Z",
        "assets": [{"name": n, "content": n} for n in names],
        **flags,
    }


WORLD = [
    release("v1.0.0", 1, "App-1.0.0-full.nupkg", "App-1.0.0.AppImage", "App-1.0.0-x64.zip"),
    release(
        "v1.1.0",
        2,
        "App-1.1.0-full.nupkg",
        "App-1.1.0-delta.nupkg",
        "App-1.1.0.AppImage",
        "App-1.1.0-x64.zip",
        rollout=25,
    ),
]


async def test_feeds_announce_a_staged_release(make_client: Any, load: Any) -> None:
    await load(one_repo(WORLD))
    client = await make_client()
    yml = await (await client.get(f"{FEEDS}/electron/latest-linux.yml")).json(content_type=None)
    assert (yml["version"], yml["stagingPercentage"]) == ("1.1.0", 25)
    text = await (await client.get(f"{FEEDS}/squirrel/x64/RELEASES")).text()
    assert [(line.split()[1].rsplit("/", 1)[1], line.split("#")[1:]) for line in
            text.splitlines()] == [
        ("App-1.0.0-full.nupkg", []),  # for installs outside the 25%
        ("App-1.1.0-delta.nupkg", [" 25%"]),
        ("App-1.1.0-full.nupkg", [" 25%"]),
    ]  # fmt: skip
    # the spec's update check does not change
    resp = await client.get(UPDATE, params={"version": "1.0.0", "platform": "darwin"})
    assert (await resp.json())["name"] == "v1.1.0"


async def test_rollout_through_the_api(make_client: Any, load: Any) -> None:
    await load(one_repo([release("v1.0.0", 1, "App-1.0.0.AppImage")]))
    client = await make_client()
    created = await client.post(API, json={"tag_name": "v1.2.0", "rollout": 10}, headers=OWNER)
    assert created.status == 201
    release_id = (await created.json())["id"]
    upload = await client.post(
        f"{API}/{release_id}/assets?name=App-1.2.0.AppImage", data=b"new", headers=OWNER
    )
    assert upload.status == 201

    async def staging() -> Any:
        resp = await client.get(f"{FEEDS}/electron/latest-linux.yml")
        return (await resp.json(content_type=None)).get("stagingPercentage")

    assert await staging() == 10
    for bad in [0, 101, "50", 2.5, True]:
        resp = await client.patch(f"{API}/{release_id}", json={"rollout": bad}, headers=OWNER)
        assert resp.status == 422, bad
    raised = await client.patch(f"{API}/{release_id}", json={"rollout": 60}, headers=OWNER)
    assert raised.status == 200
    assert await staging() == 60
    # an edit that does not mention it keeps it
    await client.patch(f"{API}/{release_id}", json={"name": "Twelve"}, headers=OWNER)
    assert await staging() == 60
    await client.patch(f"{API}/{release_id}", json={"rollout": 100}, headers=OWNER)
    assert await staging() is None  # everyone


async def test_clients_without_a_staging_id_get_a_staged_release_only_at_100(
    make_client: Any, load: Any
) -> None:
    """Squirrel.Mac and Tauri send nothing that places an install inside the percentage: they
    are offered the newest release every install may take, and the staged one once it is 100."""
    await load(
        one_repo(
            [
                release("v1.0.0", 1, "App-1.0.0-x64.zip"),
                release("v1.1.0", 2, "App-1.1.0-x64.zip", rollout=25),
            ]
        )
    )
    client = await make_client()

    async def mac_offer(current: str) -> Any:
        resp = await client.get(f"/owner/app/darwin-x64/{current}")
        return resp.status, (await resp.json())["name"] if resp.status == 200 else None

    assert await mac_offer("0.9.0") == (200, "v1.0.0")  # the unstaged release, not v1.1.0
    assert await mac_offer("1.0.0") == (204, None)
    listed = await client.get(API, params={"prereleases": "true"})
    release_id = next(r["id"] for r in await listed.json() if r["tag_name"] == "v1.1.0")
    await client.patch(f"{API}/{release_id}", json={"rollout": 100}, headers=OWNER)
    assert await mac_offer("1.0.0") == (200, "v1.1.0")
