"""Release safety over HTTP (docs/release-safety.md): the version-2 fields set by PATCH with
their audit entries, and the decisions of the feeds that know the running version (Squirrel.Mac,
Tauri's dynamic answer, forge's own update check) beside the spec's check, which keeps the spec's
rules; the list feeds (electron-updater's yml, Squirrel.Windows' RELEASES) simply lose the
withdrawn release, which is what rolls their clients back."""

from __future__ import annotations

from typing import Any

from forge_common.keys import DB_POOL
from forge_releases.read.update_check import repo_releases

from .publish_support import api, auth, publish_world

FEEDS = "/api/v2/repos/owner/pub/releases/feeds"
SPEC = "/api/v2/repos/owner/pub/releases/update"
SAFE = "/api/v2/repos/owner/pub/update"


def _release(tag: str, day: int, **flags: Any) -> dict[str, Any]:
    version = tag[1:]
    names = [f"App-{version}-mac.zip", f"App-{version}.AppImage", f"App-x64-{version}-full.nupkg"]
    return {
        "tag": tag,
        "created_at": f"2026-02-{day:02d}T10:00:00Z",
        "assets": [{"name": name, "content": f"{name} bytes"} for name in names],
        **flags,
    }


def world(*releases: dict[str, Any]) -> dict[str, Any]:
    built = publish_world()
    for repo in built["repos"]:
        if repo["name"] == "pub":
            repo["releases"] = list(releases)
    return built


async def _id(client: Any, tag: str) -> int:
    release = await (await client.get(f"{api('owner/pub')}/{tag}", headers=auth("owner"))).json()
    return int(release["id"])


async def _offered(client: Any, path: str) -> str | None:
    resp = await client.get(path)
    assert resp.status in (200, 204), (path, resp.status, await resp.text())
    return None if resp.status == 204 else (await resp.json())["name"]


async def test_patch_withdraws_and_every_feed_follows(make_client: Any, load: Any, db: Any) -> None:
    await load(world(_release("v1.0.0", 1), _release("v1.1.0", 2), _release("v1.2.0", 3)))
    client = await make_client(wait_cache=True)
    assert await _offered(client, "/owner/pub/darwin-x64/1.1.0") == "v1.2.0"  # cached
    rid = await _id(client, "v1.2.0")
    for caller, status in (("reader", 403), ("stranger", 403), ("anonymous", 401)):
        body = {"withdrawn": True}
        resp = await client.patch(f"{api('owner/pub')}/{rid}", json=body, headers=auth(caller))
        assert resp.status == status, caller
    headers = {**auth("writer"), "X-Request-Id": "withdraw-1"}
    body = {"withdrawn": True, "withdrawn_reason": "crashes on start"}
    resp = await client.patch(f"{api('owner/pub')}/{rid}", json=body, headers=headers)
    assert resp.status == 200
    patched = await resp.json()
    assert (patched["withdrawn"], patched["withdrawn_reason"]) == (True, "crashes on start")

    # Squirrel.Mac installs what it is given: rolled back to the newest release not withdrawn
    assert await _offered(client, "/owner/pub/darwin-x64/1.2.0") == "v1.1.0"
    assert await _offered(client, "/owner/pub/darwin-x64/1.1.0") is None
    assert await _offered(client, "/owner/pub/darwin-x64/1.0.0") == "v1.1.0"
    # the spec's check keeps the spec's rules: nothing newer than 1.2.0, so 204
    assert await _offered(client, f"{SPEC}?version=1.2.0&platform=linux") is None
    assert await _offered(client, f"{SPEC}?version=1.0.0&platform=linux") == "v1.1.0"
    # forge's own check rolls back only for an app that installs a lower version
    assert await _offered(client, f"{SAFE}?version=1.2.0&platform=linux") is None
    down = f"{SAFE}?version=1.2.0&platform=linux&allow_downgrade=true"
    assert await _offered(client, down) == "v1.1.0"
    # the list feeds no longer name it: electron-updater (allowDowngrade) and Squirrel.Windows
    # take the lower version from there
    yml = await (await client.get(f"{FEEDS}/electron/latest-linux.yml")).json(content_type=None)
    assert yml["version"] == "1.1.0"
    releases_file = await (await client.get(f"{FEEDS}/squirrel/x64/RELEASES")).text()
    assert "1.2.0" not in releases_file and "App-x64-1.1.0-full.nupkg" in releases_file

    entry = await db.fetchrow("SELECT * FROM core.audit_log ORDER BY id DESC LIMIT 1")
    assert (entry["kind"], entry["actor"], entry["source"]) == (
        "release.withdrawn",
        "writer",
        "api",
    )
    assert (entry["target"], entry["request_id"]) == ("owner/pub@v1.2.0", "withdraw-1")

    resp = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"withdrawn": False}, headers=auth("writer")
    )
    assert (await resp.json())["withdrawn"] is False
    assert await _offered(client, "/owner/pub/darwin-x64/1.1.0") == "v1.2.0"


async def test_a_required_step_comes_first_where_the_version_is_known(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world(_release("v1.0.0", 1), _release("v1.5.0", 2), _release("v2.0.0", 3)))
    client = await make_client()
    rid = await _id(client, "v1.5.0")
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"required": True}, headers=auth("writer")
    )
    assert resp.status == 200 and (await resp.json())["required"] is True
    assert await _offered(client, "/owner/pub/darwin-x64/1.0.0") == "v1.5.0"
    assert await _offered(client, "/owner/pub/darwin-x64/1.5.0") == "v2.0.0"
    assert await _offered(client, f"{SAFE}?version=1.0.0&platform=linux") == "v1.5.0"
    assert await _offered(client, f"{SAFE}?version=1.5.0&platform=linux") == "v2.0.0"
    # the spec's check: the newest, as the spec says
    assert await _offered(client, f"{SPEC}?version=1.0.0&platform=linux") == "v2.0.0"
    entry = await db.fetchrow("SELECT kind, changes FROM core.audit_log ORDER BY id DESC LIMIT 1")
    assert entry["kind"] == "release.required"
    assert entry["changes"] == {"required": {"before": False, "after": True}}


async def test_below_a_critical_release_the_update_is_mandatory(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world(_release("v1.0.0", 1), _release("v1.5.0", 2), _release("v2.0.0", 3)))
    client = await make_client()
    rid = await _id(client, "v1.5.0")
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"critical": True}, headers=auth("writer")
    )
    assert resp.status == 200 and (await resp.json())["critical"] is True
    below = await (await client.get("/owner/pub/darwin-x64/1.0.0")).json()
    assert below["name"] == "v2.0.0" and below["mandatory"] is True
    above = await (await client.get("/owner/pub/darwin-x64/1.5.0")).json()
    assert "mandatory" not in above
    safe = await (await client.get(f"{SAFE}?version=1.2.0&platform=linux")).json()
    assert safe["mandatory"] is True
    spec = await (await client.get(f"{SPEC}?version=1.2.0&platform=linux")).json()
    assert "mandatory" not in spec  # the spec's check never sets it
    kinds = [row["kind"] for row in await db.fetch("SELECT kind FROM core.audit_log")]
    assert kinds == ["release.critical"]


async def test_bad_safety_fields_are_422_and_change_nothing(make_client: Any, load: Any) -> None:
    await load(world(_release("v1.0.0", 1)))
    client = await make_client()
    rid = await _id(client, "v1.0.0")
    for body in (
        {"withdrawn": "yes"},
        {"critical": 1},
        {"withdrawn": True, "withdrawn_reason": "x" * 1001},
        {"withdrawn": True, "withdrawn_reason": "a\x00b"},
    ):
        resp = await client.patch(f"{api('owner/pub')}/{rid}", json=body, headers=auth("writer"))
        assert resp.status == 422, body
    release = await (await client.get(f"{api('owner/pub')}/{rid}")).json()
    assert release["withdrawn"] is False and release["critical"] is False


async def test_a_draft_cannot_be_withdrawn(make_client: Any, load: Any) -> None:
    await load(world(_release("v1.0.0", 1, draft=True)))
    client = await make_client()
    rid = await _id(client, "v1.0.0")
    resp = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"withdrawn": True}, headers=auth("writer")
    )
    assert resp.status == 409


async def test_squirrel_windows_releases_stop_at_a_required_release_below_it(
    make_client: Any, load: Any
) -> None:
    """Squirrel.Windows tells its version (`?localVersion=`, or update-electron-app's path) and
    installs the newest package RELEASES lists: below the required 1.5.0 RELEASES tops out there;
    the answers are kept per band of running versions, not per version."""
    required = _release("v1.5.0", 3, required=True)
    await load(world(_release("v1.0.0", 1), _release("v1.2.0", 2), required, _release("v2.0.0", 4)))
    client = await make_client(wait_cache=True)

    async def top(path: str) -> str:
        resp = await client.get(path)
        assert resp.status == 200, await resp.text()
        return (await resp.text()).splitlines()[-1].split()[1].rsplit("/", 1)[1]

    feed = f"{FEEDS}/squirrel/x64/RELEASES?id=App&arch=amd64&localVersion="
    for running, offered in (("1.0.0", "1.5.0"), ("1.2.0", "1.5.0"), ("1.5.0", "2.0.0")):
        assert await top(feed + running) == f"App-x64-{offered}-full.nupkg", running
        electronjs = f"/owner/pub/win32-x64/{running}/RELEASES"
        assert await top(electronjs) == f"App-x64-{offered}-full.nupkg", running
    # no version told, or a channel whose name a key cannot hold: the newest, as before
    assert await top(f"{FEEDS}/squirrel/x64/RELEASES") == "App-x64-2.0.0-full.nupkg"
    spaced = f"{FEEDS}/squirrel/x64/RELEASES?channel=a%20b&localVersion=1.0.0"
    assert await top(spaced) == "App-x64-2.0.0-full.nupkg"
    repo_id = await client.app[DB_POOL].fetchval(
        "SELECT id FROM core.repositories WHERE name = 'pub'"
    )
    kept = sorted((await repo_releases(client.app, repo_id)).answers)
    assert kept == [
        "feed squirrel x64 a b *",
        "feed squirrel x64 stable *",
        "feed squirrel x64 stable <1.5.0",
        "feed win x64 *",
        "feed win x64 <1.5.0",
    ], kept
    # the spec's check keeps the spec's rule: the newest
    spec = await (await client.get(f"{SPEC}?version=1.0.0&platform=linux")).json()
    assert spec["name"] == "v2.0.0"
