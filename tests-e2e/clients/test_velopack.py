"""Velopack's own client (the PyPI `velopack` package: its Rust core, as apps embed it) against
forge through nginx (docs/releases.md "Velopack"): headless, with a fake installed app (a manifest
`.nuspec`, a packages folder, an updater binary that exists), as its own tests run it.

- An install on 1.0.0 finds 1.1.0 at `{APP_URL}alice/desk/velopack` and downloads it, the client
  checking its size and SHA-256 against the feed.
- With its 1.0.0 package in `packages/` (the delta's base) it chooses the 1.1.0 delta.
- `ExplicitChannel` switches it to the packages whose `.nuspec` says that channel.
- A private repository: an update key in `Authorization` (HttpOptions headers) finds and
  downloads the update; without it the client is refused.
- A staged release: the install's `stagingId` (kept in `packages/.betaId`) inside the percentage
  gets it, outside does not.
- A required release (docs/release-safety.md): an install on 1.0.0 with 2.0.0 out and 1.5.0
  required is offered 1.5.0, then 2.0.0 once on 1.5.0.
- Roll back: an install on withdrawn 1.2.0 with `AllowVersionDowngrade` downloads 1.1.0 (a
  downgrade, its checksums checked by the client); without the option it is offered nothing.

The packages are made here (forge_testing.velopack), published through the API.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from forge_testing.velopack import nupkg, nuspec
from forge_testing.waiting import until

if TYPE_CHECKING:
    from conftest import Stack

velopack = pytest.importorskip("velopack")
pytestmark = pytest.mark.e2e

TOKEN = "alice-velopack-token"
WORLD = {
    "users": [{"name": "alice", "tokens": [TOKEN]}],
    "repos": [
        {"owner": "alice", "name": "desk"},
        {"owner": "alice", "name": "secret", "private": True},
        {"owner": "alice", "name": "staged"},
        {"owner": "alice", "name": "steps"},
        {"owner": "alice", "name": "yank"},
    ],
}
ALICE = {"Authorization": f"token {TOKEN}"}
APP = "AccApp"


def full(version: str, channel: str = "linux") -> bytes:
    return nupkg(APP, version, channel, notes=f"**{version}**", app=f"app {version}".encode() * 50)


def publish(stack: Stack, repo: str, tag: str, files: dict[str, bytes], **flags: Any) -> None:
    stack.publish(f"alice/{repo}", tag, files, ALICE, **flags)


@pytest.fixture(scope="module")
def published(stack: Stack) -> str:
    """The releases every test reads; returns an update key of alice/secret."""
    publish(stack, "desk", "v1.0.0", {f"{APP}-1.0.0-linux-full.nupkg": full("1.0.0")})
    publish(
        stack,
        "desk",
        "v1.1.0",
        {
            f"{APP}-1.1.0-linux-full.nupkg": full("1.1.0"),
            f"{APP}-1.1.0-linux-delta.nupkg": nupkg(APP, "1.1.0", "linux", app=b"delta"),
        },
    )
    publish(
        stack,
        "desk",
        "v1.2.0-beta.1",
        {f"{APP}-1.2.0-beta.1-beta-full.nupkg": full("1.2.0-beta.1", "beta")},
    )
    for tag in ("v1.0.0", "v1.1.0"):
        version = tag[1:]
        publish(stack, "secret", tag, {f"{APP}-{version}-linux-full.nupkg": full(version)})
    publish(stack, "staged", "v1.0.0", {f"{APP}-1.0.0-linux-full.nupkg": full("1.0.0")})
    publish(stack, "staged", "v1.1.0", {f"{APP}-1.1.0-linux-full.nupkg": full("1.1.0")}, rollout=40)
    for version in ("1.0.0", "1.5.0", "2.0.0"):
        files = {f"{APP}-{version}-linux-full.nupkg": full(version)}
        publish(stack, "steps", f"v{version}", files, required=version == "1.5.0")
    for version in ("1.1.0", "1.2.0"):
        publish(stack, "yank", f"v{version}", {f"{APP}-{version}-linux-full.nupkg": full(version)})
    made = stack.request(
        "POST",
        "/api/v2/repos/alice/secret/update_keys",
        {**ALICE, "Content-Type": "application/json"},
        json.dumps({"name": "velopack"}).encode(),
    )
    assert made.status == 201, made.body
    key: str = made.json()["key"]
    return key


@dataclass
class Install:
    """A fake installed app, as Velopack's client finds one (VelopackLocatorConfig)."""

    root: Path

    @property
    def packages(self) -> Path:
        return self.root / "packages"

    def locator(self) -> Any:
        return velopack.VelopackLocatorConfig(
            RootAppDir=str(self.root / f"{APP}.AppImage"),
            UpdateExePath=str(self.root / "UpdateNix"),
            PackagesDir=str(self.packages),
            ManifestPath=str(self.root / "current" / "sq.version"),
            CurrentBinaryDir=str(self.root / "current"),
            IsPortable=True,
        )


def install(root: Path, version: str = "1.0.0", staging_id: str | None = None) -> Install:
    (root / "current").mkdir(parents=True)
    (root / "packages").mkdir()
    (root / "current" / "sq.version").write_text(nuspec(APP, version, "linux"))
    (root / "UpdateNix").write_bytes(b"#!/bin/sh\nexit 1\n")
    (root / "UpdateNix").chmod(0o755)
    (root / f"{APP}.AppImage").write_bytes(b"app")
    if staging_id is not None:
        (root / "packages" / ".betaId").write_text(staging_id)
    return Install(root)


def manager(
    stack: Stack,
    repo: str,
    where: Install,
    channel: str | None = None,
    downgrade: bool = False,
    **headers: str,
) -> Any:
    options = velopack.HttpOptions(
        Headers=[velopack.HttpHeader(Name=name, Value=value) for name, value in headers.items()],
        TimeoutMilliseconds=30000,
    )
    source = velopack.HttpSource(f"{stack.base_url}alice/{repo}/velopack", options)
    update_options = velopack.UpdateOptions(
        AllowVersionDowngrade=downgrade, MaximumDeltasBeforeFallback=10, ExplicitChannel=channel
    )
    return velopack.UpdateManager(source, update_options, where.locator())


def test_an_install_on_1_0_0_finds_and_downloads_1_1_0(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    where = install(tmp_path)
    updates = manager(stack, "desk", where)
    info = updates.check_for_updates()
    assert info is not None
    target = info.TargetFullRelease
    assert (target.Version, target.Type, target.FileName) == (
        "1.1.0",
        "Full",
        f"{APP}-1.1.0-linux-full.nupkg",
    )
    assert target.NotesMarkdown == "**1.1.0**"
    assert not info.DeltasToTarget  # no base in packages/: the full package
    updates.download_updates(info)  # the client checks Size and SHA256 itself
    downloaded = (where.packages / target.FileName).read_bytes()
    assert downloaded == full("1.1.0")
    assert hashlib.sha256(downloaded).hexdigest().upper() == target.SHA256


def test_with_its_base_package_at_hand_the_client_takes_the_delta(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    where = install(tmp_path)
    (where.packages / f"{APP}-1.0.0-linux-full.nupkg").write_bytes(full("1.0.0"))
    info = manager(stack, "desk", where).check_for_updates()
    assert info is not None
    assert info.TargetFullRelease.Version == "1.1.0"
    assert info.BaseRelease is not None and info.BaseRelease.Version == "1.0.0"
    assert [(d.Version, d.Type, d.FileName) for d in info.DeltasToTarget] == [
        ("1.1.0", "Delta", f"{APP}-1.1.0-linux-delta.nupkg")
    ]


def test_an_explicit_channel_reads_the_packages_built_for_it(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    info = manager(stack, "desk", install(tmp_path), channel="beta").check_for_updates()
    assert info is not None
    assert (info.TargetFullRelease.Version, info.TargetFullRelease.FileName) == (
        "1.2.0-beta.1",
        f"{APP}-1.2.0-beta.1-beta-full.nupkg",
    )


def test_a_private_repository_with_an_update_key_in_authorization(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    where = install(tmp_path / "keyed")
    updates = manager(stack, "secret", where, Authorization=f"token {published}")
    info = updates.check_for_updates()
    assert info is not None and info.TargetFullRelease.Version == "1.1.0"
    updates.download_updates(info)
    assert (where.packages / info.TargetFullRelease.FileName).read_bytes() == full("1.1.0")

    refused = manager(stack, "secret", install(tmp_path / "anonymous"))
    with pytest.raises(RuntimeError, match="401"):
        refused.check_for_updates()


def _in_bucket(bucket: int) -> str:
    value = int(0xFFFFFFFF * (bucket + 0.5) / 100)
    return str(uuid.UUID(bytes=bytes(12) + value.to_bytes(4, "big")))


@pytest.mark.parametrize(
    ("bucket", "offered"), [(10, "1.1.0"), (39, "1.1.0"), (40, None), (90, None)]
)
def test_a_staged_release_reaches_the_installs_inside_its_percentage(
    stack: Stack, published: str, tmp_path: Path, bucket: int, offered: str | None
) -> None:
    where = install(tmp_path, staging_id=_in_bucket(bucket))
    info = manager(stack, "staged", where).check_for_updates()
    assert (info.TargetFullRelease.Version if info is not None else None) == offered
    assert (where.packages / ".betaId").read_text().strip() == _in_bucket(bucket)


def test_a_required_release_is_offered_first_then_the_newest(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    below = manager(stack, "steps", install(tmp_path / "below", "1.0.0")).check_for_updates()
    assert below is not None and below.TargetFullRelease.Version == "1.5.0"
    on_step = manager(stack, "steps", install(tmp_path / "on", "1.5.0")).check_for_updates()
    assert on_step is not None and on_step.TargetFullRelease.Version == "2.0.0"


def test_an_install_on_a_withdrawn_release_rolls_back_with_allow_version_downgrade(
    stack: Stack, published: str, tmp_path: Path
) -> None:
    api = "/api/v2/repos/alice/yank/releases"
    release_id = stack.get(f"{api}/v1.2.0", ALICE).json()["id"]
    headers = {**ALICE, "Content-Type": "application/json"}
    body = json.dumps({"withdrawn": True, "withdrawn_reason": "crashes on start"}).encode()
    assert stack.request("PATCH", f"{api}/{release_id}", headers, body).status == 200

    def offered_lower() -> bool:
        feed = stack.get("/alice/yank/velopack/releases.linux.json")
        return [a["Version"] for a in feed.json()["Assets"]] == ["1.1.0"]

    until(offered_lower, 1.5, lambda: "the withdrawn 1.2.0 is still listed")
    stays = manager(stack, "yank", install(tmp_path / "stays", "1.2.0")).check_for_updates()
    assert stays is None  # a lower version only with AllowVersionDowngrade
    where = install(tmp_path / "back", "1.2.0")
    updates = manager(stack, "yank", where, downgrade=True)
    info = updates.check_for_updates()
    assert info is not None and info.IsDowngrade
    assert (info.TargetFullRelease.Version, info.TargetFullRelease.FileName) == (
        "1.1.0",
        f"{APP}-1.1.0-linux-full.nupkg",
    )
    updates.download_updates(info)  # the client checks Size and SHA256 itself
    assert (where.packages / info.TargetFullRelease.FileName).read_bytes() == full("1.1.0")
