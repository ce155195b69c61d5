"""The update feeds (forge_releases/feeds/) over HTTP against real PostgreSQL: the
update.electronjs.org shape, Squirrel.Windows RELEASES per architecture and electron-updater's yml
files, built from stored releases and the hashes recorded at upload, cached and invalidated."""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

from forge_testing.waiting import eventually

from .support import auth, one_repo

APP = "http://forge.test/owner/app/releases/download"
FEEDS = "/api/v2/repos/owner/app/releases/feeds"


def asset(name: str) -> dict[str, str]:
    return {"name": name, "content": f"bytes of {name}"}


def digest(name: str, algorithm: str) -> bytes:
    return hashlib.new(algorithm, f"bytes of {name}".encode()).digest()


def release(tag: str, day: int, *names: str, **flags: Any) -> dict[str, Any]:
    return {
        "tag": tag,
        "title": f"App {tag}",
        "note": f"notes of {tag}",
        "created_at": f"2026-01-{day:02d}T10:00:00Z",
        "assets": [asset(n) for n in names],
        **flags,
    }


WORLD = [
    release(
        "v1.0.0",
        1,
        "App-1.0.0-mac.zip",
        "App-1.0.0-arm64-mac.zip",
        "App-x64-1.0.0-full.nupkg",
        "App-arm64-1.0.0-full.nupkg",
    ),
    release(
        "v1.1.0",
        2,
        "App-1.1.0-mac.zip",
        "App-1.1.0-arm64-mac.zip",
        "App-1.1.0.dmg",
        "App-x64-1.1.0-full.nupkg",
        "App-x64-1.1.0-delta.nupkg",
        "App-arm64-1.1.0-full.nupkg",
        "App Setup 1.1.0.exe",
        "App-1.1.0.AppImage",
        "App-1.1.0-arm64.AppImage",
    ),
    release(
        "v1.2.0-beta.1",
        3,
        "App-1.2.0-beta.1-arm64-mac.zip",
        "App-x64-1.2.0-beta1-full.nupkg",
        "App-x64-1.2.0-beta1-delta.nupkg",
        prerelease=True,
    ),
    release("v1.3.0", 4, "notes.txt"),  # newest, but nothing any feed serves
    release("v9.0.0", 5, "App-9.0.0-arm64-mac.zip", draft=True),
]


async def test_squirrel_mac_via_update_electronjs_shape(make_client: Any, load: Any) -> None:
    await load(one_repo(WORLD))
    client = await make_client()
    resp = await client.get("/owner/app/darwin-arm64/1.0.0")
    assert resp.status == 200
    assert await resp.json() == {
        "name": "v1.1.0",
        "notes": "notes of v1.1.0",
        "pub_date": "2026-01-02T10:00:00Z",
        "url": f"{APP}/v1.1.0/App-1.1.0-arm64-mac.zip",
    }
    # electron-builder's arch-less mac zip is the Intel build
    intel = await (await client.get("/owner/app/darwin-x64/1.0.0")).json()
    assert intel["url"] == f"{APP}/v1.1.0/App-1.1.0-mac.zip"
    # not newer (drafts and prereleases never count): 204 with an empty body
    for path in ["/owner/app/darwin-arm64/1.1.0", "/owner/app/darwin-arm64/2.0.0"]:
        resp = await client.get(path)
        assert (resp.status, await resp.read()) == (204, b"")
    resp = await client.get("/owner/app/darwin-arm64/latest")
    assert resp.status == 400
    assert (await client.get("/owner/nothing/darwin-arm64/1.0.0")).status == 404


async def test_squirrel_windows_releases_per_arch_with_deltas(make_client: Any, load: Any) -> None:
    await load(one_repo(WORLD))
    client = await make_client()
    resp = await client.get(f"{FEEDS}/squirrel/x64/RELEASES?id=App&localVersion=1.0.0&arch=amd64")
    assert resp.status == 200 and resp.content_type == "text/plain"
    lines = (await resp.text()).splitlines()
    names = ["App-x64-1.1.0-delta.nupkg", "App-x64-1.1.0-full.nupkg"]
    assert lines == [
        f"{digest(n, 'sha1').hex().upper()} {APP}/v1.1.0/{n} {len(f'bytes of {n}')}" for n in names
    ]
    arm = (await (await client.get(f"{FEEDS}/squirrel/arm64/RELEASES")).text()).splitlines()
    assert [line.split()[1].rsplit("/", 1)[1] for line in arm] == ["App-arm64-1.1.0-full.nupkg"]
    # a channel: the beta's full package plus every delta up to it, oldest first
    beta = await (await client.get(f"{FEEDS}/squirrel/amd64/RELEASES?channel=beta")).text()
    assert [line.split()[1].rsplit("/", 1)[1] for line in beta.splitlines()] == [
        "App-x64-1.1.0-delta.nupkg",
        "App-x64-1.2.0-beta1-delta.nupkg",
        "App-x64-1.2.0-beta1-full.nupkg",
    ]
    # the update-electron-app shape serves the same stable feed
    same = await client.get("/owner/app/win32-x64/1.0.0/RELEASES")
    assert (same.status, (await same.text()).splitlines()) == (200, lines)
    # never an empty body or a 204: an architecture without packages is an error
    resp = await client.get(f"{FEEDS}/squirrel/ia32/RELEASES")
    assert resp.status == 404 and (await resp.json())["error"]["code"] == "NoReleasesFound"


async def test_electron_updater_yml_files(make_client: Any, load: Any) -> None:
    await load(one_repo(WORLD))
    client = await make_client()

    async def yml(name: str) -> Any:
        resp = await client.get(f"{FEEDS}/electron/{name}")
        assert resp.status == 200, name
        assert resp.content_type == "text/yaml"
        return await resp.json(content_type=None)  # JSON is YAML

    mac = await yml("latest-mac.yml")
    assert mac["version"] == "1.1.0"
    assert [f["url"].rsplit("/", 1)[1] for f in mac["files"]] == [
        "App-1.1.0-mac.zip",
        "App-1.1.0-arm64-mac.zip",
        "App-1.1.0.dmg",
    ]
    first = mac["files"][0]
    assert first["sha512"] == base64.b64encode(digest("App-1.1.0-mac.zip", "sha512")).decode()
    assert first["size"] == len("bytes of App-1.1.0-mac.zip")
    assert (mac["path"], mac["sha512"]) == (first["url"], first["sha512"])
    assert mac["releaseDate"] == "2026-01-02T10:00:00Z"
    assert (mac["releaseName"], mac["releaseNotes"]) == ("App v1.1.0", "notes of v1.1.0")
    assert "stagingPercentage" not in mac
    win = await yml("latest.yml")
    assert win["path"] == f"{APP}/v1.1.0/App%20Setup%201.1.0.exe"
    assert [f["url"].rsplit("/", 1)[1] for f in (await yml("latest-linux.yml"))["files"]] == [
        "App-1.1.0.AppImage"
    ]
    arm = await yml("latest-linux-arm64.yml")
    assert [f["url"].rsplit("/", 1)[1] for f in arm["files"]] == ["App-1.1.0-arm64.AppImage"]
    beta = await yml("beta-mac.yml")
    assert beta["version"] == "1.2.0-beta.1"
    # a channel holds its own prereleases and the stable releases
    assert (await yml("alpha-mac.yml"))["version"] == "1.1.0"
    for missing in ["latest-linux-armv7l.yml", "nothing.txt", "latest-windows.yml"]:
        resp = await client.get(f"{FEEDS}/electron/{missing}")
        assert resp.status == 404, missing


async def test_an_uploaded_yml_is_served_as_uploaded(make_client: Any, load: Any) -> None:
    uploaded = release("v2.0.0", 6, "App-2.0.0-mac.zip", "latest-mac.yml")
    await load(one_repo([*WORLD, uploaded]))
    client = await make_client()
    resp = await client.get(f"{FEEDS}/electron/latest-mac.yml", allow_redirects=False)
    assert resp.status == 302
    location = resp.headers["Location"]
    assert location == f"{APP}/v2.0.0/latest-mac.yml"
    served = await client.get(location.removeprefix("http://forge.test"))
    assert await served.text() == "bytes of latest-mac.yml"
    # the other files are still generated, from the same release
    linux = await client.get(f"{FEEDS}/electron/latest.yml")
    assert (await linux.json(content_type=None))["version"] == "1.1.0"


async def test_feeds_follow_access_rules(make_client: Any, load: Any) -> None:
    await load(one_repo(WORLD, private=True))
    client = await make_client()
    for path in [
        "/owner/app/darwin-arm64/1.0.0",
        f"{FEEDS}/squirrel/x64/RELEASES",
        f"{FEEDS}/electron/latest-mac.yml",
    ]:
        assert (await client.get(path)).status == 401, path
        assert (await client.get(path, headers=auth("stranger"))).status == 404, path
        resp = await client.get(path, headers=auth("owner"))
        assert resp.status == 200, path
        assert resp.headers["Cache-Control"].startswith("private")


async def test_a_new_release_reaches_cached_feeds_at_once(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(one_repo(WORLD))
    client = await make_client(wait_cache=True)

    async def mac_version() -> str:
        resp = await client.get(f"{FEEDS}/electron/latest-mac.yml")
        return str((await resp.json(content_type=None))["version"])

    assert await mac_version() == "1.1.0"
    assert await mac_version() == "1.1.0"  # now answered from the cache
    async with db.transaction():
        release_id = await db.fetchval(
            """INSERT INTO releases.releases (repo_id, tag, created_at)
               SELECT id, 'v1.4.0', now() FROM core.repositories WHERE name = 'app'
               RETURNING id"""
        )
        await db.execute(
            """INSERT INTO releases.assets (release_id, name, size, sha1, sha256, sha512)
               VALUES ($1, 'App-1.4.0-mac.zip', 1, '', repeat('0', 64), repeat('0', 128))""",
            release_id,
        )

    async def updated() -> bool:
        return await mac_version() == "1.4.0"

    await eventually(updated, what="the new release in latest-mac.yml")


async def test_an_update_key_gets_signed_urls_that_need_no_headers(
    make_client: Any, load: Any
) -> None:
    await load(one_repo(WORLD, private=True))
    client = await make_client()
    created = await client.post(
        "/api/v2/repos/owner/app/update_keys", json={"name": "desk"}, headers=auth("owner")
    )
    key = (await created.json())["key"]
    plain = await (await client.get(f"{FEEDS}/squirrel/x64/RELEASES", headers=auth("owner"))).text()
    for _ in range(2):  # never served from the answers kept for other callers
        resp = await client.get(f"{FEEDS}/squirrel/x64/RELEASES?key={key}&localVersion=1.0.0")
        assert resp.status == 200
        for line in (await resp.text()).splitlines():
            url = urlsplit(line.split()[1])
            assert set(parse_qs(url.query)) == {"key_id", "expires", "signature"}
            assert url.path.endswith(".nupkg") and key not in line
            got = await client.get(f"{url.path}?{url.query}", skip_auto_headers=["User-Agent"])
            assert got.status == 200
    mac = await (await client.get(f"/owner/app/darwin-arm64/1.0.0?key={key}")).json()
    url = urlsplit(mac["url"])
    assert (await client.get(f"{url.path}?{url.query}")).status == 200
    # the token's answer (no key) stays unsigned
    assert "signature=" not in plain


TAURI_WORLD = [
    {
        "tag": "v1.0.0",
        "created_at": "2026-01-01T10:00:00Z",
        "assets": [asset("App_aarch64.app.tar.gz"), asset("App_aarch64.app.tar.gz.sig")],
    },
    {
        "tag": "v1.1.0",
        "note": "Tauri notes",
        "created_at": "2026-01-02T10:00:00Z",
        "assets": [
            asset("App_aarch64.app.tar.gz"),
            {"name": "App_aarch64.app.tar.gz.sig", "content": "c2lnbmF0dXJl\n"},
            asset("App_x64.app.tar.gz"),  # no .sig: never offered
            asset("App_1.1.0_x64-setup.exe"),
            {"name": "App_1.1.0_x64-setup.exe.sig", "content": "d2luZG93cw=="},
        ],
    },
]


async def test_tauri_dynamic_and_static(make_client: Any, load: Any) -> None:
    await load(one_repo(TAURI_WORLD))
    client = await make_client()
    resp = await client.get(f"{FEEDS}/tauri/darwin/aarch64/1.0.0")
    assert resp.status == 200
    assert await resp.json() == {
        "version": "1.1.0",
        "url": f"{APP}/v1.1.0/App_aarch64.app.tar.gz",
        "signature": "c2lnbmF0dXJl",
        "notes": "Tauri notes",
        "pub_date": "2026-01-02T10:00:00Z",
    }
    for path in [
        f"{FEEDS}/tauri/darwin/aarch64/1.1.0",  # not newer
        f"{FEEDS}/tauri/darwin/x86_64/1.0.0",  # unsigned bundle
        f"{FEEDS}/tauri/linux/x86_64/1.0.0",  # nothing for Linux
    ]:
        resp = await client.get(path)
        assert (resp.status, await resp.read()) == (204, b""), path
    assert (await client.get(f"{FEEDS}/tauri/darwin/aarch64/v1")).status == 400
    assert (await client.get(f"{FEEDS}/tauri/beos/x86_64/1.0.0")).status == 404
    static = await (await client.get(f"{FEEDS}/tauri/latest.json")).json()
    assert "name" not in static and static["version"] == "1.1.0"
    assert static["platforms"] == {
        "darwin-aarch64": {
            "signature": "c2lnbmF0dXJl",
            "url": f"{APP}/v1.1.0/App_aarch64.app.tar.gz",
        },
        "windows-x86_64": {
            "signature": "d2luZG93cw==",
            "url": f"{APP}/v1.1.0/App_1.1.0_x64-setup.exe",
        },
    }
