"""Real update clients against the running system (nginx → releases): electron-updater and
update-electron-app from npm run in Node (this folder's lock file, conftest.py `run_node`);
Squirrel's RELEASES and Squirrel.Mac's JSON checked with the clients' own rules (docs: shared
reference clients.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from conftest import Stack

    from .conftest import RunNode

pytestmark = pytest.mark.e2e

CLIENTS = Path(__file__).resolve().parent
FEEDS = "api/v2/repos/alice/desk/releases/feeds"


def content(name: str) -> str:
    return f"the bytes of {name} " * 40


def release(tag: str, day: int, names: list[str], **flags: Any) -> dict[str, Any]:
    return {
        "tag": tag,
        "note": f"What is new in {tag}",
        "created_at": f"2026-02-{day:02d}T08:30:00Z",
        "assets": [{"name": n, "content": content(n)} for n in names],
        **flags,
    }


WORLD = {
    "users": [{"name": "alice", "tokens": ["alice-clients-token"]}],
    "repos": [
        {
            "owner": "alice",
            "name": "desk",
            "releases": [
                release(
                    "v1.0.0",
                    1,
                    [
                        "Desk-1.0.0.AppImage",
                        "Desk-1.0.0-arm64-mac.zip",
                        "Desk-x64-1.0.0-full.nupkg",
                        "Desk-ia32-1.0.0-full.nupkg",
                    ],
                ),
                release(
                    "v1.1.0",
                    2,
                    [
                        "Desk-1.1.0.AppImage",
                        "Desk-1.1.0-mac.zip",
                        "Desk-1.1.0-arm64-mac.zip",
                        "Desk-x64-1.1.0-full.nupkg",
                        "Desk-x64-1.1.0-delta.nupkg",
                        "Desk-ia32-1.1.0-full.nupkg",
                        "Desk-ia32-1.1.0-delta.nupkg",
                    ],
                ),
            ],
        },
        {
            "owner": "alice",
            "name": "staged",
            "releases": [
                release("v1.0.0", 1, ["Desk-1.0.0.AppImage", "Desk-1.0.0-full.nupkg"]),
                release(
                    "v2.0.0",
                    3,
                    ["Desk-2.0.0.AppImage", "Desk-2.0.0-full.nupkg", "Desk-2.0.0-delta.nupkg"],
                    rollout=50,
                ),
            ],
        },
        {"owner": "alice", "name": "tauri"},
        {
            "owner": "alice",
            "name": "secret",
            "private": True,
            "releases": [
                release("v1.0.0", 1, ["Desk-1.0.0.AppImage", "Desk-1.0.0-arm64-mac.zip"]),
                release("v1.1.0", 2, ["Desk-1.1.0.AppImage", "Desk-1.1.0-arm64-mac.zip"]),
            ],
        },
    ],
}
ALICE = {"Authorization": "token alice-clients-token"}
STAGED = "api/v2/repos/alice/staged/releases/feeds"
# electron-updater puts an install at (last 4 bytes of its staging id) / 0xffffffff
INSIDE = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a00000001"  # ~0.0: inside 50%
OUTSIDE = "3f2b8c1e-4d5a-4b6c-8d7e-9f0affffffff"  # 1.0: outside


def local_path(stack: Stack, url: str) -> str:
    """The path of an absolute URL our server handed out (it starts with APP_URL)."""
    assert url.startswith(stack.base_url), url
    return "/" + url.removeprefix(stack.base_url)


def test_electron_updater_finds_downloads_and_verifies(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    base = f"{stack.base_url}{FEEDS}/electron"
    found = run_node("electron-updater.js", base, "1.0.0", str(tmp_path / "a"))
    assert found["available"] and found["version"] == "1.1.0"
    # downloadUpdate() checked the SHA-512 from latest-linux.yml against these bytes
    [downloaded] = found["downloaded"]
    assert Path(downloaded).read_text() == content("Desk-1.1.0.AppImage")
    current = run_node("electron-updater.js", base, "1.1.0", str(tmp_path / "b"))
    assert (current["available"], current["downloaded"]) == (False, [])


def test_update_electron_app_feed_url_is_answered(stack: Stack, run_node: RunNode) -> None:
    # update-electron-app insists on an https host; the path it builds is what matters here
    host = "https://updates.example.org"
    feed = run_node("update-electron-app.js", host, "alice/desk", "darwin", "arm64", "1.0.0")
    url = urlsplit(feed["url"])
    assert url.path == "/alice/desk/darwin-arm64/1.0.0"
    mac = stack.get(url.path, {"Accept": "application/json"})
    assert mac.status == 200
    update = mac.json()
    assert update["url"].endswith("/alice/desk/releases/download/v1.1.0/Desk-1.1.0-arm64-mac.zip")
    # Squirrel.Mac downloads the zip with no custom headers
    zipped = stack.get(local_path(stack, update["url"]), {"Accept": "application/zip"})
    assert (zipped.status, zipped.body.decode()) == (200, content("Desk-1.1.0-arm64-mac.zip"))
    win = run_node("update-electron-app.js", host, "alice/desk", "win32", "x64", "1.0.0")
    # Squirrel.Windows GETs {feed}/RELEASES with its own query
    releases = stack.get(f"{urlsplit(win['url']).path}/RELEASES?id=Desk&localVersion=1.0.0")
    assert releases.status == 200
    assert "Desk-x64-1.1.0-full.nupkg" in releases.body.decode()


# --- Squirrel.Mac: what its client accepts (clients.md) ---------------------------------------
def test_squirrel_mac_contract(stack: Stack) -> None:
    newer = stack.get("/alice/desk/darwin-x64/1.0.0", {"Accept": "application/json"})
    assert newer.status == 200 and newer.headers["Content-Type"].startswith("application/json")
    body = newer.json()
    # pub_date in the one form Squirrel.Mac parses: yyyy-MM-ddTHH:mm:ssZ, no fractions
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["pub_date"])
    url = urlsplit(body["url"])
    assert url.scheme == "http" and url.netloc and url.path.endswith("/Desk-1.1.0-mac.zip")
    same = stack.get("/alice/desk/darwin-x64/1.1.0", {"Accept": "application/json"})
    assert (same.status, same.body) == (204, b"")


# --- Squirrel.Windows: the client's own parsing rules -----------------------------------------
# Squirrel.Windows ReleaseEntry.ParseReleaseEntry: a `# NN%` staging mark, comments dropped, then
# `SHA1 filename-or-URL size`; the version comes from the file name.
ENTRY = re.compile(r"^([0-9a-fA-F]{40})\s+(\S+)\s+(\d+)[\r]*$")
STAGING = re.compile(r"#\s+(\d{1,3})%$")
COMMENT = re.compile(r"\s*#.*$")
SUFFIX = re.compile(r"(-full|-delta)?\.nupkg$")
VERSION = re.compile(r"\d+(\.\d+){0,3}(-[A-Za-z][0-9A-Za-z-]*)?$")


def parse_releases(text: str) -> list[dict[str, Any]]:
    entries = []
    assert text.strip(), "an empty RELEASES makes the client throw"
    for line in text.splitlines():
        staged = STAGING.search(line)
        line = COMMENT.sub("", line)
        if not line.strip():
            continue
        found = ENTRY.match(line)
        assert found, f"the client throws on this line: {line!r}"
        sha1, name_or_url, size = found.groups()
        filename = name_or_url.rsplit("/", 1)[-1] if "/" in name_or_url else name_or_url
        version = VERSION.search(SUFFIX.sub("", filename))
        assert version, filename
        entries.append(
            {
                "sha1": sha1,
                "url": name_or_url,
                "size": int(size),
                "filename": filename,
                "version": version.group(),
                "delta": filename.endswith("-delta.nupkg"),
                "staged": int(staged.group(1)) if staged else None,
            }
        )
    return entries


@pytest.mark.parametrize("arch", ["x64", "ia32"])
def test_squirrel_windows_releases_per_arch(stack: Stack, arch: str) -> None:
    resp = stack.get(f"/{FEEDS}/squirrel/{arch}/RELEASES?id=Desk&localVersion=1.0.0&arch=amd64")
    assert resp.status == 200
    entries = parse_releases(resp.body.decode())
    assert [(e["filename"], e["version"], e["delta"]) for e in entries] == [
        (f"Desk-{arch}-1.1.0-delta.nupkg", "1.1.0", True),
        (f"Desk-{arch}-1.1.0-full.nupkg", "1.1.0", False),
    ]
    for entry in entries:
        # every URL works with no headers and its size and SHA-1 are the bytes'
        got = stack.get(local_path(stack, entry["url"]))
        assert got.status == 200 and len(got.body) == entry["size"]
        assert hashlib.sha1(got.body, usedforsecurity=False).hexdigest().upper() == entry["sha1"]


def test_electron_updater_honours_a_staged_rollout(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    base = f"{stack.base_url}{STAGED}/electron"
    inside = run_node("electron-updater.js", base, "1.0.0", str(tmp_path / "in"), INSIDE)
    assert (inside["available"], inside["version"], inside["stagingPercentage"]) == (
        True,
        "2.0.0",
        50,
    )
    assert Path(inside["downloaded"][0]).read_text() == content("Desk-2.0.0.AppImage")
    outside = run_node("electron-updater.js", base, "1.0.0", str(tmp_path / "out"), OUTSIDE)
    assert (outside["available"], outside["downloaded"]) == (False, [])


def test_squirrel_windows_staged_entries(stack: Stack) -> None:
    text = stack.get(f"/{STAGED}/squirrel/x64/RELEASES").body.decode()
    entries = parse_releases(text)
    assert [(e["filename"], e["staged"]) for e in entries] == [
        ("Desk-1.0.0-full.nupkg", None),  # what installs outside the 50% keep seeing
        ("Desk-2.0.0-delta.nupkg", 50),
        ("Desk-2.0.0-full.nupkg", 50),
    ]


# --- a private repository, through an update key (clients that send no headers) --------------
@pytest.fixture(scope="module")
def update_key(stack: Stack) -> str:
    created = stack.request(
        "POST",
        "/api/v2/repos/alice/secret/update_keys",
        {**ALICE, "Content-Type": "application/json"},
        json.dumps({"name": "desk app"}).encode(),
    )
    assert created.status == 201, created.body
    key: str = created.json()["key"]
    return key


def test_electron_updater_private_repository_with_update_key(
    stack: Stack, run_node: RunNode, tmp_path: Path, update_key: str
) -> None:
    base = f"{stack.base_url}api/v2/repos/alice/secret/releases/feeds/electron"
    found = run_node("electron-updater.js", f"{base}?key={update_key}", "1.0.0", str(tmp_path))
    assert found["available"] and found["version"] == "1.1.0"
    assert Path(found["downloaded"][0]).read_text() == content("Desk-1.1.0.AppImage")
    # without the key the feed is closed
    assert (
        stack.get("/api/v2/repos/alice/secret/releases/feeds/electron/latest-linux.yml").status
        == 401
    )


def test_squirrel_mac_private_download_needs_no_headers(stack: Stack, update_key: str) -> None:
    check = stack.get(f"/alice/secret/darwin-arm64/1.0.0?key={update_key}")
    assert check.status == 200
    url = check.json()["url"]
    assert "signature=" in url and update_key not in url
    # Squirrel.Mac's download: Accept only, no custom headers
    zipped = stack.get(local_path(stack, url), {"Accept": "application/zip"})
    assert (zipped.status, zipped.body.decode()) == (200, content("Desk-1.1.0-arm64-mac.zip"))


# --- Tauri: bundles signed by `tauri signer sign`, checked with Debian's minisign --------------
TAURI_API = "/api/v2/repos/alice/tauri/releases"
TAURI_KEY = "/api/v2/repos/alice/tauri/tauri_key"
BUNDLE = b"tauri updater bundle " * 500


@pytest.fixture(scope="module")
def tauri_published(
    stack: Stack, run_node: RunNode, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """v1.1.0 of alice/tauri published through the API with a bundle and its `.sig` made by the
    real `tauri signer`; returns the folder holding the public key `key.pub`."""
    folder = tmp_path_factory.mktemp("tauri")
    tauri = str(CLIENTS / "node_modules" / ".bin" / "tauri")
    env = {**os.environ, "TAURI_SIGNING_PRIVATE_KEY_PASSWORD": "pw"}
    for argv in (
        [tauri, "signer", "generate", "--ci", "-p", "pw", "-w", str(folder / "key")],
        [tauri, "signer", "sign", "-f", str(folder / "key"), "-p", "pw", "App.app.tar.gz"],
    ):
        (folder / "App.app.tar.gz").write_bytes(BUNDLE)
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
    headers = {**ALICE, "Content-Type": "application/json"}
    # the repository's Tauri public key: from now on the server checks every .sig at upload
    key = json.dumps({"public_key": (folder / "key.pub").read_text()}).encode()
    assert stack.request("PUT", TAURI_KEY, headers, key).status == 200
    body = json.dumps({"tag_name": "v1.1.0", "body": "Signed"}).encode()
    created = stack.request("POST", TAURI_API, headers, body)
    assert created.status == 201, created.body
    release_id = created.json()["id"]
    for name in ("App_aarch64.app.tar.gz", "App_aarch64.app.tar.gz.sig"):
        source = "App.app.tar.gz" + (".sig" if name.endswith(".sig") else "")
        uploaded = stack.request(
            "POST",
            f"{TAURI_API}/{release_id}/assets?name={name}",
            {**ALICE, "Content-Type": "application/octet-stream"},
            (folder / source).read_bytes(),
        )
        assert uploaded.status == 201, uploaded.body
    return folder


def test_a_tauri_signature_of_other_bytes_is_refused_at_upload(
    stack: Stack, tauri_published: Path
) -> None:
    """The real `tauri signer` signature of BUNDLE, uploaded beside other bytes: 422, not stored,
    so no installed app is ever offered a bundle its updater would reject."""
    headers = {**ALICE, "Content-Type": "application/json"}
    body = json.dumps({"tag_name": "v1.2.0", "draft": True}).encode()
    release_id = stack.request("POST", TAURI_API, headers, body).json()["id"]
    upload = {**ALICE, "Content-Type": "application/octet-stream"}
    assets = f"{TAURI_API}/{release_id}/assets?name=App_x86_64.app.tar.gz"
    assert stack.request("POST", assets, upload, BUNDLE + b"tampered").status == 201
    sig = (tauri_published / "App.app.tar.gz.sig").read_bytes()
    refused = stack.request("POST", f"{assets}.sig", upload, sig)
    assert refused.status == 422, refused.body
    assert refused.json()["error"]["code"] == "TauriSignatureInvalid"


def test_tauri_signature_verifies_with_minisign(stack: Stack, tauri_published: Path) -> None:
    minisign = shutil.which("minisign")
    if minisign is None:
        pytest.skip("minisign is not installed (make clients-tools installs it as root)")
    resp = stack.get(f"{TAURI_API}/feeds/tauri/darwin/aarch64/1.0.0")
    assert resp.status == 200, resp.body
    update = resp.json()
    assert set(update) == {"version", "url", "signature", "notes", "pub_date"}
    assert update["version"] == "1.1.0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", update["pub_date"])
    downloaded = stack.get(local_path(stack, update["url"]))
    assert downloaded.status == 200 and downloaded.body == BUNDLE
    # what Tauri's updater does: base64-decode `signature` and the public key, verify the bytes
    check = tauri_published / "check"
    check.mkdir()
    (check / "bundle").write_bytes(downloaded.body)
    (check / "bundle.minisig").write_bytes(base64.b64decode(update["signature"]))
    (check / "key.pub").write_bytes(base64.b64decode((tauri_published / "key.pub").read_bytes()))
    verified = subprocess.run(
        [minisign, "-V", "-p", "key.pub", "-m", "bundle", "-x", "bundle.minisig"],
        cwd=check,
        capture_output=True,
        timeout=30,
    )
    assert verified.returncode == 0, verified.stderr
    # other bytes do not verify: the check above can fail
    (check / "bundle").write_bytes(downloaded.body + b"!")
    tampered = subprocess.run(
        [minisign, "-V", "-p", "key.pub", "-m", "bundle", "-x", "bundle.minisig"],
        cwd=check,
        capture_output=True,
        timeout=30,
    )
    assert tampered.returncode != 0
    static = stack.get(f"{TAURI_API}/feeds/tauri/latest.json").json()
    assert static["platforms"]["darwin-aarch64"]["signature"] == update["signature"]
