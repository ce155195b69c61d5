"""Release safety with real update clients (docs/release-safety.md), through nginx: the release
is withdrawn, marked required or critical through the version-2 API as a release manager does,
then electron-updater from npm runs against the yml feed, and Squirrel.Mac's and Tauri's answers
are checked with the clients' own rules (Tauri's signature with minisign, as test_updaters.py)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from forge_testing.waiting import until

from .test_updaters import parse_releases

if TYPE_CHECKING:
    from conftest import Stack

    from .conftest import RunNode

pytestmark = pytest.mark.e2e

CLIENTS = Path(__file__).resolve().parent
TOKEN = "carol-safety-token"
CAROL = {"Authorization": f"token {TOKEN}"}
READER = {"Authorization": "token reader-safety-token"}


def content(name: str) -> str:
    return f"the bytes of {name} " * 40


def release(tag: str, day: int, names: list[str]) -> dict[str, Any]:
    return {
        "tag": tag,
        "created_at": f"2026-03-{day:02d}T08:30:00Z",
        "assets": [{"name": n, "content": content(n)} for n in names],
    }


def desk(version: str) -> list[str]:
    return [f"Desk-{version}.AppImage", f"Desk-{version}-mac.zip", f"Desk-{version}-full.nupkg"]


WORLD = {
    "users": [
        {"name": "carol", "tokens": [TOKEN]},
        {"name": "reader", "tokens": ["reader-safety-token"]},
    ],
    "repos": [
        {
            "owner": "carol",
            "name": name,
            "collaborators": [{"user": "reader", "permission": "read"}],
            "releases": [release(f"v{v}", d, desk(v)) for d, v in enumerate(versions, 1)],
        }
        for name, versions in (
            ("yank", ("1.1.0", "1.2.0")),
            ("steps", ("1.0.0", "1.5.0", "2.0.0")),
        )
    ]
    + [{"owner": "carol", "name": "tauri"}],
}


def patch(stack: Stack, repo: str, tag: str, body: dict[str, Any]) -> dict[str, Any]:
    api = f"/api/v2/repos/carol/{repo}/releases"
    release_id = stack.get(f"{api}/{tag}", CAROL).json()["id"]
    headers = {**CAROL, "Content-Type": "application/json"}
    done = stack.request("PATCH", f"{api}/{release_id}", headers, json.dumps(body).encode())
    assert done.status == 200, done.body
    answer: dict[str, Any] = done.json()
    return answer


# nginx keeps anonymous answers up to a second (its micro-cache): a change shows within that bound
BOUND = 1.5


def settled(stack: Stack, path: str, check: Any) -> dict[str, Any]:
    """The JSON answer to `path` once `check(answer)` holds, within the micro-cache's bound."""
    seen: list[Any] = [None]

    def holds() -> bool:
        reply = stack.get(path)
        seen[0] = reply.json() if reply.status == 200 else reply.status
        return reply.status == 200 and bool(check(seen[0]))

    until(holds, BOUND, lambda: f"{path} answered {seen[0]}")
    answer: dict[str, Any] = seen[0]
    return answer


def electron(stack: Stack, repo: str) -> str:
    return f"{stack.base_url}api/v2/repos/carol/{repo}/releases/feeds/electron"


def _is(version: str) -> Any:
    return lambda answer: answer["version"] == version


def test_electron_updater_rolls_back_only_with_allow_downgrade(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    before = run_node("electron-updater.js", electron(stack, "yank"), "1.1.0", str(tmp_path / "a"))
    assert before["available"] and before["version"] == "1.2.0"
    withdrawn = patch(stack, "yank", "v1.2.0", {"withdrawn": True, "withdrawn_reason": "crash"})
    assert withdrawn["withdrawn"] is True
    feed = electron(stack, "yank")
    settled(
        stack, "/api/v2/repos/carol/yank/releases/feeds/electron/latest-linux.yml", _is("1.1.0")
    )
    down = run_node("electron-updater.js", feed, "1.2.0", str(tmp_path / "b"), "", "", "allow")
    assert down["available"] and down["version"] == "1.1.0"
    # downloadUpdate() checked the yml's SHA-512 against these bytes
    [downloaded] = down["downloaded"]
    assert Path(downloaded).read_text() == content("Desk-1.1.0.AppImage")
    stay = run_node("electron-updater.js", feed, "1.2.0", str(tmp_path / "c"), "", "", "deny")
    assert (stay["available"], stay["downloaded"]) == (False, [])
    # Squirrel.Mac installs what `url` names: it is rolled back too, with the right bytes
    mac = settled(stack, "/carol/yank/darwin-x64/1.2.0", lambda a: a["name"] == "v1.1.0")
    zipped = stack.get("/" + mac["url"].removeprefix(stack.base_url))
    assert zipped.body.decode() == content("Desk-1.1.0-mac.zip")
    # the withdrawn files stay downloadable by direct URL for those who may read them
    kept = stack.get("/carol/yank/releases/download/v1.2.0/Desk-1.2.0.AppImage", READER)
    assert kept.status == 200


def test_a_required_step_then_the_newest(stack: Stack, run_node: RunNode, tmp_path: Path) -> None:
    assert patch(stack, "steps", "v1.5.0", {"required": True})["required"] is True
    settled(stack, "/carol/steps/darwin-x64/1.0.0", lambda a: a["name"] == "v1.5.0")
    then = stack.get("/carol/steps/darwin-x64/1.5.0").json()
    assert then["name"] == "v2.0.0"
    safe = "/api/v2/repos/carol/steps/update?platform=linux&arch=x64&version="
    settled(stack, safe + "1.0.0", lambda a: a["name"] == "v1.5.0")
    assert stack.get(safe + "1.5.0").json()["name"] == "v2.0.0"
    # electron-updater's request names no version: its yml offers the newest (docs: no step)
    yml = run_node("electron-updater.js", electron(stack, "steps"), "1.0.0", str(tmp_path))
    assert yml["version"] == "2.0.0"
    # Squirrel.Windows tells its version on RELEASES and installs the highest version listed
    # (read with the client's own parsing rules)
    feed = "/api/v2/repos/carol/steps/releases/feeds/squirrel/x64/RELEASES?id=Desk&arch=amd64"
    electronjs = "/carol/steps/win32-x64/{}/RELEASES"
    for running, offered in (("1.0.0", "1.5.0"), ("1.5.0", "2.0.0")):
        for path in (f"{feed}&localVersion={running}", electronjs.format(running)):
            entries = parse_releases(stack.get(path).body.decode())
            newest = max(entries, key=lambda e: [int(n) for n in e["version"].split(".")])
            assert newest["version"] == offered, path


def test_below_the_minimum_version_the_answer_says_mandatory(stack: Stack) -> None:
    assert patch(stack, "steps", "v2.0.0", {"critical": True})["critical"] is True
    below = settled(stack, "/carol/steps/darwin-x64/1.5.0", lambda a: "mandatory" in a)
    assert below["name"] == "v2.0.0" and below["mandatory"] is True
    safe = "/api/v2/repos/carol/steps/update?platform=linux&arch=x64&version=1.5.0"
    assert settled(stack, safe, lambda a: "mandatory" in a)["mandatory"] is True
    spec = "/api/v2/repos/carol/steps/releases/update?platform=linux&arch=x64&version=1.5.0"
    assert "mandatory" not in stack.get(spec).json()  # the spec's check never sets it


TAURI = "/api/v2/repos/carol/tauri"
BUNDLES = {"1.1.0": b"tauri bundle one-one " * 300, "1.2.0": b"tauri bundle one-two " * 300}


def _sign_and_publish(stack: Stack, folder: Path) -> None:
    """Both versions, each bundle signed by the real `tauri signer`, under the repository's key."""
    tauri = str(CLIENTS / "node_modules" / ".bin" / "tauri")
    env = {**os.environ, "TAURI_SIGNING_PRIVATE_KEY_PASSWORD": "pw"}
    argv = [tauri, "signer", "generate", "--ci", "-p", "pw", "-w", str(folder / "key")]
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    headers = {**CAROL, "Content-Type": "application/json"}
    key = json.dumps({"public_key": (folder / "key.pub").read_text()}).encode()
    assert stack.request("PUT", f"{TAURI}/tauri_key", headers, key).status == 200
    for version, bundle in BUNDLES.items():
        name = f"App-{version}.app.tar.gz"
        (folder / name).write_bytes(bundle)
        argv = [tauri, "signer", "sign", "-f", str(folder / "key"), "-p", "pw", name]
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        body = json.dumps({"tag_name": f"v{version}"}).encode()
        release_id = stack.request("POST", f"{TAURI}/releases", headers, body).json()["id"]
        for upload, source in (
            ("App_aarch64.app.tar.gz", name),
            ("App_aarch64.app.tar.gz.sig", f"{name}.sig"),
        ):
            sent = stack.request(
                "POST",
                f"{TAURI}/releases/{release_id}/assets?name={upload}",
                {**CAROL, "Content-Type": "application/octet-stream"},
                (folder / source).read_bytes(),
            )
            assert sent.status == 201, sent.body


def test_tauri_offers_the_lower_release_with_a_signature_minisign_verifies(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    """Tauri's dynamic answer offers 1.1.0 to an install on withdrawn 1.2.0; the plugin installs it
    only with a `version_comparator` that accepts a lower version (docs/release-safety.md)."""
    minisign = shutil.which("minisign")
    if minisign is None:
        pytest.skip("minisign is not installed (make clients-tools installs it as root)")
    _sign_and_publish(stack, tmp_path)
    assert stack.get(f"{TAURI}/releases/feeds/tauri/darwin/aarch64/1.1.0").json()["version"] == (
        "1.2.0"
    )
    patch(stack, "tauri", "v1.2.0", {"withdrawn": True})
    dynamic = f"{TAURI}/releases/feeds/tauri/darwin/aarch64/1.2.0"
    update = settled(stack, dynamic, lambda a: a["version"] == "1.1.0")
    bundle = stack.get("/" + update["url"].removeprefix(stack.base_url)).body
    assert bundle == BUNDLES["1.1.0"]
    # what Tauri's updater does: base64-decode `signature` and the public key, verify the bytes
    check = tmp_path / "check"
    check.mkdir()
    (check / "bundle").write_bytes(bundle)
    (check / "bundle.minisig").write_bytes(base64.b64decode(update["signature"]))
    (check / "key.pub").write_bytes(base64.b64decode((tmp_path / "key.pub").read_bytes()))
    verified = subprocess.run(
        [minisign, "-V", "-p", "key.pub", "-m", "bundle", "-x", "bundle.minisig"],
        cwd=check,
        capture_output=True,
        timeout=30,
    )
    assert verified.returncode == 0, verified.stderr
