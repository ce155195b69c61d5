"""electron-builder's own publisher, electron-publish 26.16.0's GitHubPublisher
(electron-publish.js), as `electron-builder --publish always` with `publish: {provider: "github",
host}` drives it, against forge at https://127.0.0.1/ on port 443 (tls_front.py: nginx with TLS
in a network namespace of the test's own, in front of the stack, whose APP_URL says so).

It publishes a Windows build as electron-builder uploads it (the installer and its blockmap under
their safe names, latest.yml); a re-run after a rebuild gets GitHub's 422 `already_exists` for each
name, deletes the old asset and uploads the new one, so the release ends with the new bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .tls_front import TlsFront, tls_front

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

CLIENTS = Path(__file__).resolve().parent
TOKEN = "alice-builder-token"
ALICE = {"Authorization": f"token {TOKEN}"}
WORLD = {
    "users": [{"name": "alice", "tokens": [TOKEN]}],
    "repos": [{"owner": "alice", "name": "my-app", "releases": []}],
}
# what upload_url and every address handed out say: the TLS front on 443
STACK_ENV = {"APP_URL": "https://127.0.0.1/"}
RUN_TIMEOUT = 120


@pytest.fixture(scope="module")
def front(stack: Stack, run_node: Any) -> Iterator[TlsFront]:
    # run_node: npm ci has run, so node_modules is there
    with tls_front(stack.nginx_port) as made:
        yield made


def _build(folder: Path, build: str) -> list[str]:
    """What electron-builder leaves in dist/ for a Windows NSIS target, as FILE=UPLOAD_NAME."""
    folder.mkdir()
    exe = folder / "MyApp Setup 1.2.0.exe"
    exe.write_text(f"installer of build {build} " * 40)
    blockmap = folder / "MyApp Setup 1.2.0.exe.blockmap"
    blockmap.write_text(f"blockmap of build {build}")
    (folder / "latest.yml").write_text(
        f"version: 1.2.0\npath: MyApp-Setup-1.2.0.exe\n# build {build}\n"
    )
    return [
        f"{exe}=MyApp-Setup-1.2.0.exe",
        f"{blockmap}=MyApp-Setup-1.2.0.exe.blockmap",
        str(folder / "latest.yml"),
    ]


def _publish(front: TlsFront, files: list[str]) -> dict[str, Any]:
    done = front.run(
        [
            "node",
            str(CLIENTS / "electron-publish.js"),
            "127.0.0.1",
            "alice",
            "my-app",
            "1.2.0",
            *files,
        ],
        {"GH_TOKEN": TOKEN},
        RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _stored(stack: Stack) -> dict[str, str]:
    """name → SHA-256 of the bytes of each asset of v1.2.0 (a draft: read as its owner)."""
    release = stack.get("/api/v2/repos/alice/my-app/releases/v1.2.0", ALICE)
    assert release.status == 200, release.body
    found = {}
    for asset in release.json()["assets"]:
        path = "/" + asset["browser_download_url"].split("://", 1)[1].split("/", 1)[1]
        body = stack.get(path, ALICE)
        assert body.status == 200, (path, body.status)
        found[asset["name"]] = hashlib.sha256(body.body).hexdigest()
    return found


def _digests(files: list[str]) -> dict[str, str]:
    found = {}
    for spec in files:
        path, _, name = spec.partition("=")
        found[name or Path(path).name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found


def test_electron_publish_publishes_then_a_rerun_replaces_the_assets(
    stack: Stack, front: TlsFront, tmp_path: Path
) -> None:
    first = _build(tmp_path / "first", "1")
    out = _publish(front, first)
    assert out["uploaded"] == [
        "MyApp-Setup-1.2.0.exe",
        "MyApp-Setup-1.2.0.exe.blockmap",
        "latest.yml",
    ]
    assert _stored(stack) == _digests(first)
    # the draft electron-publish created is the one a re-run finds
    release = stack.get("/api/v2/repos/alice/my-app/releases/v1.2.0", ALICE).json()
    assert release["draft"] is True

    rebuilt = _build(tmp_path / "rebuilt", "2")
    _publish(front, rebuilt)
    after = _stored(stack)
    assert after == _digests(rebuilt) != _digests(first)
