"""Real publishers and the updaters reading what they published, through nginx:

- Electron Forge's `@electron-forge/publisher-github` 7.11.2 (forge-publisher.js) publishes a
  Squirrel.Windows and a macOS build to `/api/v3`; its re-run (a CI retry) finds every asset by
  GitHub's name for it and uploads nothing; update-electron-app 3.3.0 then reads those files back
  through the update.electronjs.org-shaped feeds.
- electron-updater 6.8.10's generic provider updates from an electron-builder `latest-linux.yml`
  uploaded as is, whose `url:` spells with dashes the file stored with a space, on a public
  repository and on a private one through an update key.

electron-builder's own GitHubPublisher needs https on port 443: test_electron_publish_tls.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from conftest import Stack

    from .conftest import RunNode

pytestmark = pytest.mark.e2e

TOKEN = "alice-publish-token"
ALICE = {"Authorization": f"token {TOKEN}"}
APPIMAGE = "Desk App-1.2.0.AppImage"  # as electron-builder writes it (productName "Desk App")
APPIMAGE_BYTES = "the new AppImage " * 64


def sha512(text: str) -> str:
    return base64.b64encode(hashlib.sha512(text.encode()).digest()).decode()


# what electron-builder writes for it: the "safe" artifact name, dashes for spaces
LATEST_LINUX_YML = f"""version: 1.2.0
files:
  - url: Desk-App-1.2.0.AppImage
    sha512: {sha512(APPIMAGE_BYTES)}
    size: {len(APPIMAGE_BYTES)}
    blockMapSize: 120
path: Desk-App-1.2.0.AppImage
sha512: {sha512(APPIMAGE_BYTES)}
releaseDate: '2026-03-01T08:30:00.000Z'
"""


def _desk(name: str, private: bool) -> dict[str, Any]:
    return {
        "owner": "alice",
        "name": name,
        "private": private,
        "releases": [
            {
                "tag": "v1.2.0",
                "created_at": "2026-03-01T08:30:00Z",
                "assets": [
                    {"name": APPIMAGE, "content": APPIMAGE_BYTES},
                    {"name": "latest-linux.yml", "content": LATEST_LINUX_YML},
                ],
            }
        ],
    }


WORLD = {
    "users": [{"name": "alice", "tokens": [TOKEN]}],
    "repos": [
        {"owner": "alice", "name": "forge-app", "releases": []},
        _desk("desk", private=False),
        _desk("vault", private=True),
    ],
}


def local_path(stack: Stack, url: str) -> str:
    assert url.startswith(stack.base_url), url
    return "/" + url.removeprefix(stack.base_url)


# --- Electron Forge ----------------------------------------------------------------------------
FORGE_FILES = {
    # maker-squirrel's three files, maker-zip's macOS archive
    "App-1.4.0 Setup.exe": "the setup " * 30,
    "app-1.4.0-full.nupkg": "the nupkg " * 30,
    "App-darwin-arm64-1.4.0.zip": "the mac zip " * 30,
}


def _forge_files(folder: Path) -> list[str]:
    folder.mkdir()
    paths = []
    for name, text in FORGE_FILES.items():
        (folder / name).write_text(text)
        paths.append(str(folder / name))
    nupkg = (folder / "app-1.4.0-full.nupkg").read_bytes()
    sha1 = hashlib.sha1(nupkg, usedforsecurity=False).hexdigest().upper()
    (folder / "RELEASES").write_text(f"{sha1} app-1.4.0-full.nupkg {len(nupkg)}")
    return [*paths, str(folder / "RELEASES")]


@pytest.fixture(scope="module")
def forge_published(
    stack: Stack, run_node: RunNode, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    files = _forge_files(tmp_path_factory.mktemp("forge") / "out")
    out: dict[str, Any] = run_node(
        "forge-publisher.js", stack.base_url, "alice", "forge-app", "1.4.0", TOKEN, *files
    )
    return out


def test_forge_publishes_under_githubs_names(forge_published: dict[str, Any]) -> None:
    names = sorted(a["name"] for a in forge_published["assets"])
    # GitHub's renaming, which Forge's sanitizeName predicts: the space became a dot
    assert names == sorted(
        ["App-1.4.0.Setup.exe", "app-1.4.0-full.nupkg", "App-darwin-arm64-1.4.0.zip", "RELEASES"]
    )
    assert forge_published["draft"] is False


def test_a_forge_rerun_skips_every_asset(
    stack: Stack,
    run_node: RunNode,
    forge_published: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    files = _forge_files(tmp_path_factory.mktemp("forge-again") / "out")
    again = run_node(
        "forge-publisher.js", stack.base_url, "alice", "forge-app", "1.4.0", TOKEN, *files
    )
    # Forge exited 0 with the same assets (same ids): it found each one by its GitHub name and
    # uploaded nothing (an upload of a name the release has is GitHub's 422, which Forge throws)
    assert again["assets"] == forge_published["assets"]


def test_update_electron_app_reads_forges_files(
    stack: Stack, run_node: RunNode, forge_published: dict[str, Any]
) -> None:
    host = "https://updates.example.org"  # update-electron-app insists on https; the path counts
    mac = run_node("update-electron-app.js", host, "alice/forge-app", "darwin", "arm64", "1.3.0")
    check = stack.get(urlsplit(mac["url"]).path, {"Accept": "application/json"})
    assert check.status == 200, check.body
    zipped = stack.get(local_path(stack, check.json()["url"]))
    assert zipped.body.decode() == FORGE_FILES["App-darwin-arm64-1.4.0.zip"]
    win = run_node("update-electron-app.js", host, "alice/forge-app", "win32", "x64", "1.3.0")
    releases = stack.get(f"{urlsplit(win['url']).path}/RELEASES?id=app&localVersion=1.3.0")
    assert releases.status == 200, releases.body
    [line] = releases.body.decode().splitlines()
    sha1, url, size = line.split()
    nupkg = stack.get(local_path(stack, url) if "://" in url else url)
    assert nupkg.status == 200 and len(nupkg.body) == int(size)
    assert hashlib.sha1(nupkg.body, usedforsecurity=False).hexdigest().upper() == sha1


# --- electron-updater from an uploaded electron-builder yml --------------------------------------
def test_electron_updater_updates_from_an_uploaded_yml_with_spaces(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    feed = f"{stack.base_url}api/v2/repos/alice/desk/releases/feeds/electron"
    found = run_node("electron-updater.js", feed, "1.0.0", str(tmp_path))
    assert (found["available"], found["version"]) == (True, "1.2.0")
    # downloadUpdate() checked the yml's sha512 against the bytes of the stored file
    assert Path(found["downloaded"][0]).read_text() == APPIMAGE_BYTES


def test_electron_updater_uploaded_yml_through_an_update_key(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    created = stack.request(
        "POST",
        "/api/v2/repos/alice/vault/update_keys",
        {**ALICE, "Content-Type": "application/json"},
        json.dumps({"name": "desk"}).encode(),
    )
    assert created.status == 201, created.body
    key = created.json()["key"]
    feed = f"{stack.base_url}api/v2/repos/alice/vault/releases/feeds/electron?key={key}"
    found = run_node("electron-updater.js", feed, "1.0.0", str(tmp_path))
    assert (found["available"], found["version"]) == (True, "1.2.0")
    assert Path(found["downloaded"][0]).read_text() == APPIMAGE_BYTES
    # the file's name resolved under the feed is closed without the key
    closed = stack.get("/api/v2/repos/alice/vault/releases/feeds/electron/Desk-App-1.2.0.AppImage")
    assert closed.status == 401


def test_source_archive_addresses_answer_through_the_proxy(
    stack: Stack, forge_published: dict[str, Any]
) -> None:
    release = stack.get("/api/v3/repos/alice/forge-app/releases/tags/v1.4.0").json()
    for url in (release["tarball_url"], release["zipball_url"]):
        answer = stack.get(local_path(stack, url))
        assert answer.status == 404
        # the service's own answer (nginx routes it), saying why: no git here
        assert answer.json()["error"]["code"] == "NoSourceArchive"
