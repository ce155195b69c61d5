"""Debian's `zsync`, the client AppImage's update tools are built on, against forge's downloads:
it rebuilds a new AppImage from the old one, fetching only the blocks that changed in
multi-range requests (docs/releases.md "Downloads"). zsync throws away the line before each
boundary of a `multipart/byteranges` body, so a body that starts with the boundary itself (and
not with CRLF, as nginx writes it) made it retry for ever: the answer written by the releases
service alone is checked here as well as the one through nginx."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

WORLD = {
    "users": [{"name": "alice", "tokens": ["alice-zsync-token"]}],
    "repos": [{"owner": "alice", "name": "desk"}],
}
ALICE = {"Authorization": "token alice-zsync-token"}
API = "/api/v2/repos/alice/desk/releases"
NAME = "Desk-x86_64.AppImage"
BLOCK = 2048  # zsyncmake's block size for files this small
ZSYNC_TIMEOUT = 60  # the old code made zsync retry until killed


def appimages() -> tuple[bytes, bytes]:
    """An old and a new AppImage (plain files) that share most blocks: the new one changes a few
    blocks here and there and grows at the end, so zsync needs several ranges at once."""
    rng = random.Random(7)
    old = bytearray(rng.randbytes(400 * BLOCK))
    new = bytearray(old)
    for block in (3, 50, 51, 180, 333):
        new[block * BLOCK : (block + 1) * BLOCK] = rng.randbytes(BLOCK)
    return bytes(old), bytes(new) + rng.randbytes(10 * BLOCK)


def publish(stack: Stack, tag: str, files: dict[str, bytes]) -> None:
    headers = {**ALICE, "Content-Type": "application/json"}
    created = stack.request("POST", API, headers, json.dumps({"tag_name": tag}).encode())
    assert created.status == 201, created.body
    release_id = created.json()["id"]
    for name, data in files.items():
        uploaded = stack.request(
            "POST",
            f"{API}/{release_id}/assets?name={name}",
            {**ALICE, "Content-Type": "application/octet-stream"},
            data,
        )
        assert uploaded.status == 201, uploaded.body


@pytest.fixture(scope="module")
def published(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """alice/desk v1.0.0 and v1.1.0, each with its AppImage and the `.zsync` that zsyncmake made
    for it; returns (the old AppImage on disk, the new AppImage's bytes)."""
    if shutil.which("zsync") is None or shutil.which("zsyncmake") is None:
        pytest.skip("zsync is not installed (make clients-tools installs it as root)")
    folder = tmp_path_factory.mktemp("appimages")
    old, new = appimages()
    for tag, data in (("v1.0.0", old), ("v1.1.0", new)):
        path = folder / tag / NAME
        path.parent.mkdir()
        path.write_bytes(data)
        subprocess.run(
            ["zsyncmake", "-u", NAME, "-o", f"{NAME}.zsync", NAME],
            cwd=path.parent,
            check=True,
            capture_output=True,
            timeout=ZSYNC_TIMEOUT,
        )
        publish(
            stack, tag, {NAME: data, f"{NAME}.zsync": (path.parent / f"{NAME}.zsync").read_bytes()}
        )
    return folder / "v1.0.0" / NAME, new


def rebuild(base_url: str, seed: Path, work: Path) -> tuple[bytes, str]:
    """zsync, seeded with the old AppImage, against v1.1.0's control file; (bytes, its output)."""
    work.mkdir()
    url = f"{base_url}alice/desk/releases/download/v1.1.0/{NAME}.zsync"
    done = subprocess.run(
        ["zsync", "-i", str(seed), "-o", str(work / NAME), url],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=ZSYNC_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (work / NAME).read_bytes(), done.stdout + done.stderr


@pytest.mark.parametrize("route", ["through nginx", "the releases service alone"])
def test_zsync_rebuilds_the_new_appimage_from_the_old(
    stack: Stack, published: tuple[Path, bytes], tmp_path: Path, route: str
) -> None:
    seed, new = published
    if route == "through nginx":
        base_url = stack.base_url
    else:
        base_url = f"http://127.0.0.1:{stack.ports['releases']}/"
    rebuilt, output = rebuild(base_url, seed, tmp_path / "work")
    assert rebuilt == new
    # it started from the old file's blocks (most of the target) and fetched the rest in ranges
    assert f"Read {seed}. Target" in output, output
    assert "100.0% complete" not in output.split(f"Read {seed}.")[1].split("\n")[0], output
