"""Real Gitea and GitHub clients against the compat APIs (docs/compat.md), through nginx: gitea-js
and @octokit/rest (npm, run in Node), PyGithub, electron-updater's GitHub provider with a custom
host, and Velopack's Gitea-source request sequence (clients.md). Each library client lists, reads
by tag and by id, lists assets, downloads one, creates a release and uploads an asset through its
own API, on a public repository anonymously and on a private one with a token."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ...conftest import Stack
from ..conftest import RunNode

TOKEN = "alice-api-token"
CLIENTS = ("octokit", "gitea", "pygithub")


def _releases(prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "tag": "v1.0.0",
            "title": "One",
            "note": "First",
            "created_at": "2026-01-01T00:00:00Z",
            "assets": [{"name": "App-1.0.0.zip", "content": f"{prefix} one"}],
        },
        {
            "tag": "v1.1.0-beta.1",
            "title": "Beta",
            "prerelease": True,
            "created_at": "2026-01-02T00:00:00Z",
            "assets": [{"name": "App-1.1.0.zip", "content": f"{prefix} beta"}],
        },
    ]


WORLD = {
    "users": [
        {"name": "alice", "tokens": [TOKEN]},
        {"name": "eve", "tokens": ["eve-api-token"]},
    ],
    "repos": [
        *(
            {
                "owner": "alice",
                "name": f"{kind}-{client}",
                "private": kind == "vault",
                "releases": _releases(f"{kind}-{client}"),
            }
            for client in CLIENTS
            for kind in ("app", "vault")
        ),
        {"owner": "alice", "name": "desktop", "releases": []},
        {"owner": "alice", "name": "velo", "private": True, "releases": []},
    ],
}
NEWEST_FIRST = ["v1.1.0-beta.1", "v1.0.0"]  # both platforms list prereleases by default


def check_client(out: dict[str, Any], repo: str, private: bool) -> None:
    assert out["anonymousStatus"] == (401 if private else 200)
    assert out["tags"][-2:] == NEWEST_FIRST
    assert out["sameRelease"] is True
    assert out["assets"] == ["App-1.0.0.zip"]
    assert out["assetBytes"] == f"{repo} one"
    assert out["repo"] == f"alice/{repo}"


@pytest.mark.parametrize("kind", ["app", "vault"])
def test_octokit_reads_creates_and_uploads_through_upload_url(
    stack: Stack, run_node: RunNode, kind: str
) -> None:
    repo = f"{kind}-octokit"
    # the public repository read anonymously, the private one with the token
    token = TOKEN if kind == "vault" else ""
    out = run_node("apis/octokit.mjs", stack.base_url, "alice", repo, "v1.0.0", token)
    check_client(out, repo, kind == "vault")
    written = run_node("apis/octokit.mjs", stack.base_url, "alice", repo, "v1.0.0", TOKEN, "v3.0.0")
    assert written["uploaded"] == {"name": "octokit.txt", "bytes": "uploaded by octokit"}
    assert written["tags"][0] == "v1.1.0-beta.1"  # listed before it created v3.0.0


@pytest.mark.parametrize("kind", ["app", "vault"])
def test_gitea_js_reads_creates_and_uploads_an_attachment(
    stack: Stack, run_node: RunNode, kind: str
) -> None:
    repo = f"{kind}-gitea"
    token = TOKEN if kind == "vault" else ""
    out = run_node("apis/gitea.mjs", stack.base_url, "alice", repo, "v1.0.0", token)
    check_client(out, repo, kind == "vault")
    written = run_node("apis/gitea.mjs", stack.base_url, "alice", repo, "v1.0.0", TOKEN, "v3.0.0")
    assert written["uploaded"] == {"name": "gitea.txt", "bytes": "uploaded by gitea-js"}


@pytest.mark.parametrize("kind", ["app", "vault"])
def test_pygithub_reads_creates_and_uploads(stack: Stack, kind: str, tmp_path: Path) -> None:
    github = pytest.importorskip("github")
    repo_name = f"{kind}-pygithub"
    base = f"{stack.base_url}api/v3"
    # one release per page: PyGithub follows `Link` to the end
    anonymous = github.Github(base_url=base, retry=None, per_page=1)
    client = github.Github(base_url=base, auth=github.Auth.Token(TOKEN), retry=None, per_page=1)
    if kind == "vault":
        with pytest.raises(github.GithubException) as denied:
            anonymous.get_repo(f"alice/{repo_name}")
        assert denied.value.status == 401
    reader = client if kind == "vault" else anonymous
    repo = reader.get_repo(f"alice/{repo_name}")
    assert repo.full_name == f"alice/{repo_name}" and repo.private is (kind == "vault")
    assert [r.tag_name for r in repo.get_releases()] == NEWEST_FIRST
    by_tag = repo.get_release("v1.0.0")
    assert repo.get_release(by_tag.id).tag_name == "v1.0.0"
    assets = list(by_tag.get_assets())
    assert [a.name for a in assets] == ["App-1.0.0.zip"]
    target = tmp_path / "App-1.0.0.zip"
    assets[0].download_asset(str(target))
    assert target.read_text() == f"{repo_name} one"
    writer = client.get_repo(f"alice/{repo_name}")
    created = writer.create_git_release("v3.0.0", "By PyGithub", "notes", prerelease=True)
    source = tmp_path / "pygithub.txt"
    source.write_text("uploaded by PyGithub")
    uploaded = created.upload_asset(str(source), label="PyGithub", content_type="text/plain")
    back = tmp_path / "back.txt"
    uploaded.download_asset(str(back))
    assert uploaded.name == "pygithub.txt" and back.read_text() == "uploaded by PyGithub"


def _publish_like_electron_builder(stack: Stack, files: dict[str, bytes]) -> None:
    """electron-builder's GitHub publisher: a draft release, each file to its upload_url, then
    the release published."""
    auth = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    api = "/api/v3/repos/alice/desktop/releases"
    body = json.dumps({"tag_name": "v2.0.0", "name": "2.0.0", "draft": True}).encode()
    created = stack.request("POST", api, auth, body)
    assert created.status == 201, created.body
    release = created.json()
    upload = urlsplit(release["upload_url"].split("{", 1)[0]).path
    for name, data in files.items():
        headers = {**auth, "Content-Type": "application/octet-stream"}
        sent = stack.request("POST", f"{upload}?name={name}", headers, data)
        assert sent.status == 201, sent.body
    published = stack.request(
        "PATCH", f"{api}/{release['id']}", auth, json.dumps({"draft": False}).encode()
    )
    assert published.status == 200


def test_electron_updater_github_provider_finds_and_downloads(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    app = b"the 2.0.0 AppImage" * 1000
    sha512 = base64.b64encode(hashlib.sha512(app).digest()).decode()
    # the channel file electron-builder uploads for Linux (the updater runs on Linux here)
    feed = (
        "version: 2.0.0\nfiles:\n  - url: App-2.0.0.AppImage\n"
        f"    sha512: {sha512}\n    size: {len(app)}\n"
        f"path: App-2.0.0.AppImage\nsha512: {sha512}\nreleaseDate: '2026-02-01T00:00:00.000Z'\n"
    )
    _publish_like_electron_builder(
        stack, {"App-2.0.0.AppImage": app, "latest-linux.yml": feed.encode()}
    )
    host = urlsplit(stack.base_url).netloc
    feed = f"github:{host}/alice/desktop"
    out = run_node("electron-updater.js", feed, "1.0.0", str(tmp_path / "app"))
    assert out["available"] is True and out["version"] == "2.0.0"
    assert [Path(p).read_bytes() for p in out["downloaded"]] == [app]


def test_velopack_gitea_source_sequence(stack: Stack) -> None:
    """Velopack's Gitea source (clients.md): the list with its exact query, then the channel
    feed and the package at each asset's `browser_download_url`, with `Authorization: token`."""
    auth = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    api = "/api/v1/repos/alice/velo/releases"
    package = b"nupkg bytes" * 100
    feed = {
        "Assets": [
            {
                "PackageId": "App",
                "Version": "2.0.0",
                "Type": "Full",
                "FileName": "App-2.0.0-full.nupkg",
                "SHA256": hashlib.sha256(package).hexdigest(),
                "Size": len(package),
            }
        ]
    }
    created = stack.request("POST", api, auth, json.dumps({"tag_name": "2.0.0"}).encode())
    assert created.status == 201, created.body
    rid = created.json()["id"]
    for name, data in (
        ("App-2.0.0-full.nupkg", package),
        ("releases.win.json", json.dumps(feed).encode()),
    ):
        sent = stack.request(
            "POST",
            f"{api}/{rid}/assets?name={name}",
            {**auth, "Content-Type": "application/octet-stream"},
            data,
        )
        assert sent.status == 201, sent.body
    token = {"Authorization": f"token {TOKEN}"}
    assert stack.get(f"{api}?limit=10&page=1&draft=false").status == 401
    listed = stack.get(f"{api}?limit=10&page=1&draft=false", token)
    assert listed.status == 200
    release = next(r for r in listed.json() if not r["prerelease"])
    urls = {a["name"]: a["browser_download_url"] for a in release["assets"]}
    got = stack.get(urlsplit(urls["releases.win.json"]).path, token)
    entry = got.json()["Assets"][0]
    downloaded = stack.get(urlsplit(urls[entry["FileName"]]).path, token)
    assert hashlib.sha256(downloaded.body).hexdigest() == entry["SHA256"]
