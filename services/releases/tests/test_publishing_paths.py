"""The publishing paths real teams use (docs/compat.md "Asset names", docs/releases.md "Files
named by a yml" and "Source archives"): an uploaded electron-builder yml whose names resolve
under the feed, GitHub's renaming and 422 on `/api/v3`, signed URLs on every API shape read
through an update key, and source archive addresses that say what they are."""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from forge_common.asset_names import github_name, loose_key

from .support import TOKENS, error_of, rel

OWNER = {"Authorization": f"token {TOKENS['owner']}"}
EXE = "MyApp Setup 1.2.0.exe"  # the file electron-builder wrote
EXE_BYTES = "the installer " * 50
FEED = "/api/v2/repos/owner/{}/releases/feeds/electron"


def sha512(text: str) -> str:
    return base64.b64encode(hashlib.sha512(text.encode()).digest()).decode()


# electron-builder's latest.yml names the file with its "safe" name: dashes for spaces
LATEST_YML = (
    "version: 1.2.0\n"
    "files:\n"
    f"  - url: MyApp-Setup-1.2.0.exe\n    sha512: {sha512(EXE_BYTES)}\n    size: {len(EXE_BYTES)}\n"
    f"path: MyApp-Setup-1.2.0.exe\nsha512: {sha512(EXE_BYTES)}\n"
    "releaseDate: '2026-01-01T00:05:00.000Z'\n"
)


def world() -> dict[str, Any]:
    release = rel("v1.2.0", 5)
    release["assets"] = [
        {"name": EXE, "content": EXE_BYTES},
        {"name": f"{EXE}.blockmap", "content": "blockmap"},
        {"name": "latest.yml", "content": LATEST_YML},
    ]
    older = rel("v1.1.0", 1)
    older["assets"] = [{"name": "MyApp Setup 1.1.0.exe", "content": "old"}]
    users = [{"name": "owner", "tokens": [TOKENS["owner"]]}]
    return {
        "users": users,
        "repos": [
            {
                "owner": "owner",
                "name": name,
                "private": name == "secret",
                "releases": [older, release],
            }
            for name in ("app", "secret")
        ],
    }


@pytest.fixture
async def client(make_client: Any, load: Any) -> Any:
    await load(world())
    return await make_client()


async def _key(client: Any, repo: str) -> str:
    resp = await client.post(
        f"/api/v2/repos/owner/{repo}/update_keys", json={"name": "app"}, headers=OWNER
    )
    assert resp.status == 201
    key: str = (await resp.json())["key"]
    return key


async def _follow(client: Any, url: str, headers: dict[str, str] | None = None) -> Any:
    """GET `url` (absolute or a path) without following redirects."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return await client.get(path, headers=headers or {}, allow_redirects=False)


# --- the electron feed: names an uploaded yml hands out ----------------------------------------
@pytest.mark.parametrize(
    "asked",
    ["MyApp-Setup-1.2.0.exe", "MyApp.Setup.1.2.0.exe", EXE, "MyApp-Setup-1.2.0.exe.blockmap"],
)
async def test_a_name_of_an_uploaded_yml_resolves_under_the_feed(client: Any, asked: str) -> None:
    latest = await client.get(f"{FEED.format('app')}/latest.yml", allow_redirects=False)
    assert latest.status == 302  # the uploaded yml, served as uploaded
    found = await client.get(f"{FEED.format('app')}/{asked}", allow_redirects=False)
    assert found.status == 302, await found.text()
    location = found.headers["Location"]
    stored = EXE + (".blockmap" if asked.endswith(".blockmap") else "")
    assert unquote(urlsplit(location).path).endswith(f"/releases/download/v1.2.0/{stored}")
    body = await (await _follow(client, location)).text()
    assert body == (EXE_BYTES if stored == EXE else "blockmap")


async def test_a_name_no_release_has_is_404(client: Any) -> None:
    missing = await client.get(f"{FEED.format('app')}/Other-Setup-1.2.0.exe")
    assert missing.status == 404
    assert error_of(await missing.json())[0] == "NoReleasesFound"


async def test_names_of_a_private_yml_resolve_through_an_update_key(client: Any) -> None:
    key = await _key(client, "secret")
    base = FEED.format("secret")
    assert (await client.get(f"{base}/MyApp-Setup-1.2.0.exe")).status == 401
    found = await client.get(f"{base}/MyApp-Setup-1.2.0.exe?key={key}", allow_redirects=False)
    assert found.status == 302
    location = found.headers["Location"]
    assert "signature=" in location and key not in location
    # the signed URL downloads with no header at all, as electron-updater does
    assert await (await _follow(client, location)).text() == EXE_BYTES


# --- /api/v3: GitHub's names and GitHub's 422 --------------------------------------------------
@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("App-1.4.0 Setup.exe", "App-1.4.0.Setup.exe"),
        ("MyApp-Setup-1.2.0.exe", "MyApp-Setup-1.2.0.exe"),
        ("Été  (beta) .zip", "Ete.beta.zip"),
        (".hidden.", "hidden"),
        ("a@b+c_d.tar.gz", "a@b+c_d.tar.gz"),
    ],
)
def test_github_names(sent: str, stored: str) -> None:
    assert github_name(sent) == stored


def test_loose_keys_join_the_three_spellings() -> None:
    spellings = {loose_key(n) for n in (EXE, "MyApp-Setup-1.2.0.exe", "MyApp.Setup.1.2.0.exe")}
    assert len(spellings) == 1
    assert loose_key("MyApp_Setup_1.2.0.exe") not in spellings


async def _release_id(client: Any, root: str, tag: str) -> int:
    resp = await client.post(f"{root}/releases", json={"tag_name": tag}, headers=OWNER)
    assert resp.status == 201
    release_id: int = (await resp.json())["id"]
    return release_id


async def test_github_uploads_store_githubs_name_and_a_taken_one_is_422(client: Any) -> None:
    root = "/api/v3/repos/owner/app"
    release_id = await _release_id(client, root, "v1.4.0")
    upload = f"{root}/releases/{release_id}/assets"
    headers = {**OWNER, "Content-Type": "application/octet-stream"}
    first = await client.post(
        upload, params={"name": "App-1.4.0 Setup.exe"}, data=b"x", headers=headers
    )
    assert first.status == 201
    assert (await first.json())["name"] == "App-1.4.0.Setup.exe"
    for again in ("App-1.4.0 Setup.exe", "App-1.4.0.Setup.exe"):
        taken = await client.post(upload, params={"name": again}, data=b"y", headers=headers)
        assert taken.status == 422
        assert await taken.json() == {
            "message": "Validation Failed",
            "errors": [{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}],
            "documentation_url": "https://docs.github.com/rest/releases/assets#upload-a-release-asset",
            "status": "422",
        }
    # version 2 keeps the name as sent, and its 409
    v2 = f"/api/v2/repos/owner/app/releases/{release_id}/assets"
    kept = await client.post(v2, params={"name": "Other 1.exe"}, data=b"z", headers=headers)
    assert (await kept.json())["name"] == "Other 1.exe"
    again = await client.post(v2, params={"name": "Other 1.exe"}, data=b"z", headers=headers)
    assert again.status == 409


# --- every API shape read through an update key hands out signed URLs --------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/repos/owner/secret/releases",
        "/api/v1/repos/owner/secret/releases/latest",
        "/api/v3/repos/owner/secret/releases",
        "/api/v3/repos/owner/secret/releases/tags/v1.2.0",
        "/api/v2/repos/owner/secret/releases/latest",
    ],
)
async def test_compat_reads_through_a_key_hand_out_signed_urls(client: Any, path: str) -> None:
    key = await _key(client, "secret")
    resp = await client.get(f"{path}?key={key}")
    assert resp.status == 200, await resp.text()
    data = await resp.json()
    releases = data if isinstance(data, list) else [data]
    urls = [a["browser_download_url"] for r in releases for a in r["assets"]]
    assert urls
    for url in urls:
        assert "signature=" in url and key not in url
        assert (await _follow(client, url)).status == 200  # no header: the URL authorises itself


async def test_pages_read_with_a_key_link_signed_urls(client: Any) -> None:
    key = await _key(client, "secret")
    page = await client.get(f"/owner/secret/releases/tag/v1.2.0?key={key}")
    assert page.status == 200
    html = await page.text()
    links = [part.split('"', 1)[0] for part in html.split('href="')[1:]]
    downloads = [link.replace("&amp;", "&") for link in links if "/releases/download/" in link]
    assert downloads and all("signature=" in link for link in downloads)
    assert (await _follow(client, downloads[0])).status == 200


# --- tarball_url / zipball_url -----------------------------------------------------------------
async def test_source_archive_addresses_say_forge_hosts_no_git(client: Any) -> None:
    release = await (await client.get("/api/v2/repos/owner/app/releases/v1.2.0")).json()
    for url in (release["tarball_url"], release["zipball_url"]):
        resp = await _follow(client, url)
        assert resp.status == 404
        code, message = error_of(await resp.json())
        assert code == "NoSourceArchive" and "not git repositories" in message


async def test_a_source_archive_the_release_carries_is_served(make_client: Any, load: Any) -> None:
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": "App-1.0.0-source.tar.gz", "content": "source"}]
    await load(
        {"users": [{"name": "o"}], "repos": [{"owner": "o", "name": "app", "releases": [release]}]}
    )
    client = await make_client()
    data = await (await client.get("/api/v2/repos/o/app/releases/v1.0.0")).json()
    found = await _follow(client, data["tarball_url"])
    assert found.status == 302
    assert await (await _follow(client, found.headers["Location"])).text() == "source"
    assert (await _follow(client, data["zipball_url"])).status == 404
    assert (await client.get("/o/app/archive/v9.tar.gz")).status == 404
