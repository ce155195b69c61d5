"""Debian's `zsync`, the client AppImage's update tools are built on, against forge's downloads:
it rebuilds a new AppImage from the old one, fetching only the blocks that changed in
multi-range requests (docs/releases.md "AppImage updates").

- zsync throws away the line before each boundary of a `multipart/byteranges` body, so a body
  that starts with the boundary itself (not with CRLF, as nginx writes it) made it retry for ever:
  the answer written by the releases service alone is checked as well as the one through nginx,
  and electron-updater's own multi-range downloader reads the same answers.
- zsyncmake writes the file's name as a relative `URL:`, which zsync resolves against the
  `.zsync`'s address with the query dropped: forge sends the `.zsync` with that URL made absolute
  and pinned to its release (signed when an update key was used), so the permanent
  `releases/latest/download/{name}.zsync` works, for a private repository with `?key=`, and from a
  saved `.zsync`.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from forge_testing.waiting import until

if TYPE_CHECKING:
    from conftest import Stack

    from .conftest import RunNode

pytestmark = pytest.mark.e2e

WORLD = {
    "users": [{"name": "alice", "tokens": ["alice-zsync-token"]}],
    "repos": [
        {"owner": "alice", "name": "desk"},
        {"owner": "alice", "name": "secret", "private": True},
    ],
}
ALICE = {"Authorization": "token alice-zsync-token"}
NAME = "Desk-x86_64.AppImage"
BLOCK = 2048  # zsyncmake's block size for files this small
CHANGED = (3, 50, 51, 180, 333)  # the blocks the new AppImage changes; it also grows by 10
ZSYNC_TIMEOUT = 60  # the old code made zsync retry until killed


def appimages() -> tuple[bytes, bytes]:
    """An old and a new AppImage (plain files) that share most blocks: the new one changes a few
    blocks here and there and grows at the end, so zsync needs several ranges at once."""
    rng = random.Random(7)
    old = bytearray(rng.randbytes(400 * BLOCK))
    new = bytearray(old)
    for block in CHANGED:
        new[block * BLOCK : (block + 1) * BLOCK] = rng.randbytes(BLOCK)
    return bytes(old), bytes(new) + rng.randbytes(10 * BLOCK)


@pytest.fixture(scope="module")
def published(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """alice/desk and alice/secret v1.0.0 and v1.1.0, each with its AppImage and the `.zsync`
    that zsyncmake made for it (with the relative URL it writes by default); returns (the old
    AppImage on disk, the new AppImage's bytes)."""
    if shutil.which("zsync") is None or shutil.which("zsyncmake") is None:
        pytest.skip("zsync is not installed (make clients-tools installs it as root)")
    folder = tmp_path_factory.mktemp("appimages")
    old, new = appimages()
    for tag, data in (("v1.0.0", old), ("v1.1.0", new)):
        path = folder / tag / NAME
        path.parent.mkdir()
        path.write_bytes(data)
        subprocess.run(
            ["zsyncmake", "-o", f"{NAME}.zsync", NAME],
            cwd=path.parent,
            check=True,
            capture_output=True,
            timeout=ZSYNC_TIMEOUT,
        )
        control = (path.parent / f"{NAME}.zsync").read_bytes()
        assert f"URL: {NAME}\n".encode() in control  # relative, as AppImage tooling makes it
        for repo in ("desk", "secret"):
            stack.publish(f"alice/{repo}", tag, {NAME: data, f"{NAME}.zsync": control}, ALICE)
    return folder / "v1.0.0" / NAME, new


def zsync(seed: Path, work: Path, source: str) -> subprocess.CompletedProcess[str]:
    """zsync, seeded with the old AppImage, against `source` (a URL or a saved `.zsync`)."""
    work.mkdir()
    return subprocess.run(
        ["zsync", "-i", str(seed), "-o", str(work / NAME), source],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=ZSYNC_TIMEOUT,
    )


def rebuilt(seed: Path, work: Path, source: str) -> bytes:
    done = zsync(seed, work, source)
    assert done.returncode == 0, done.stdout + done.stderr
    # it started from the old file's blocks and fetched the rest
    assert f"Read {seed}. Target " in done.stdout + done.stderr, done.stdout + done.stderr
    return (work / NAME).read_bytes()


def ranged_requests(stack: Stack, path: str) -> list[str]:
    """nginx's access log lines of 206 answers for `path`."""
    access_log = stack.processes[-1].access_log
    assert access_log is not None
    return [
        line
        for line in access_log.read_text().splitlines()
        if f"GET {path}" in line and '" 206 ' in line
    ]


@pytest.mark.parametrize("route", ["through nginx", "the releases service alone"])
def test_zsync_rebuilds_the_new_appimage_from_the_old(
    stack: Stack, published: tuple[Path, bytes], tmp_path: Path, route: str
) -> None:
    seed, new = published
    if route == "through nginx":
        base_url = stack.base_url
    else:
        base_url = f"http://127.0.0.1:{stack.ports['releases']}/"
    url = f"{base_url}alice/desk/releases/download/v1.1.0/{NAME}.zsync"
    assert rebuilt(seed, tmp_path / "work", url) == new


def test_zsync_through_the_permanent_latest_address(
    stack: Stack, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    """The update information an AppImage embeds: `zsync|{APP_URL}{owner}/{repo}/releases/latest/
    download/{name}.zsync`; the ranges go to the release's own file, in several ranges at once."""
    seed, new = published
    url = f"{stack.base_url}alice/desk/releases/latest/download/{NAME}.zsync"
    assert rebuilt(seed, tmp_path / "work", url) == new
    pinned = f"/alice/desk/releases/download/v1.1.0/{NAME}"
    until(lambda: ranged_requests(stack, pinned), 10, "a ranged request in nginx's log", 0.2)


def test_zsync_from_a_saved_control_file(
    stack: Stack, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    """A `.zsync` saved to disk names no address of its own: its URL is absolute."""
    seed, new = published
    saved = tmp_path / f"{NAME}.zsync"
    answer = stack.get(f"/alice/desk/releases/latest/download/{NAME}.zsync")
    assert answer.status == 200
    saved.write_bytes(answer.body)
    assert rebuilt(seed, tmp_path / "work", str(saved)) == new


def test_zsync_of_a_private_repository_with_an_update_key(
    stack: Stack, published: tuple[Path, bytes], tmp_path: Path
) -> None:
    """`?key=` on the `.zsync`'s address: the URL inside is signed, so the ranges need no key;
    without a key, or once the key is revoked, nothing is fetched."""
    seed, new = published
    created = stack.request(
        "POST",
        "/api/v2/repos/alice/secret/update_keys",
        {**ALICE, "Content-Type": "application/json"},
        json.dumps({"name": "appimage"}).encode(),
    )
    assert created.status == 201, created.body
    key, key_id = created.json()["key"], created.json()["id"]
    url = f"{stack.base_url}alice/secret/releases/latest/download/{NAME}.zsync"
    assert rebuilt(seed, tmp_path / "with-key", f"{url}?key={key}") == new
    assert zsync(seed, tmp_path / "without", url).returncode != 0
    revoked = stack.request("DELETE", f"/api/v2/repos/alice/secret/update_keys/{key_id}", ALICE)
    assert revoked.status == 204, revoked.body
    assert zsync(seed, tmp_path / "revoked", f"{url}?key={key}").returncode != 0


def download_plan(old_size: int, new_size: int) -> list[tuple[str, int, int]]:
    """What electron-updater's differential download would do for these two files: copy each
    unchanged block from the old file, download the changed ones and the new tail."""
    plan = []
    for block in range(old_size // BLOCK):
        kind = "download" if block in CHANGED else "copy"
        plan.append((kind, block * BLOCK, (block + 1) * BLOCK))
    plan.append(("download", old_size, new_size))
    return plan


@pytest.mark.parametrize("route", ["through nginx", "the releases service alone"])
def test_electron_updater_reads_the_same_multi_range_answers(
    stack: Stack,
    published: tuple[Path, bytes],
    run_node: RunNode,
    tmp_path: Path,
    route: str,
) -> None:
    """electron-updater's own multi-range downloader (the one its differential downloads run)
    accepts the body that starts with CRLF before the first boundary: it rebuilds the new file
    from the old one and six ranges asked in one request."""
    seed, new = published
    if route == "through nginx":
        base_url = stack.base_url
    else:
        base_url = f"http://127.0.0.1:{stack.ports['releases']}/"
    url = f"{base_url}alice/desk/releases/download/v1.1.0/{NAME}"
    plan = json.dumps(download_plan(seed.stat().st_size, len(new)))
    out = tmp_path / NAME
    done = run_node("electron-updater-ranges.js", url, str(seed), str(out), plan)
    assert done == {"written": len(new)}
    assert out.read_bytes() == new
