"""`forge release publish` warns about what updaters will make of a release (docs/cli-and-world.md
"Warnings"): a tag that is not a semantic version, and an electron-builder yml naming a file not
published with it or giving another file's sha512. Publishing still goes ahead."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from forge_testing.linux_packages import deb, rpm
from forge_testing.velopack import nupkg

from .test_cli_publish import publish_in_process, server

__all__ = ["server"]  # the fixture, used by name


def _yml(name: str, sha: bytes) -> str:
    digest = base64.b64encode(hashlib.sha512(sha).digest()).decode()
    return f"version: 1.2.0\nfiles:\n  - url: {name}\n    sha512: {digest}\npath: {name}\n"


async def test_a_tag_that_is_not_semver_is_warned_about(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    yml = tmp_path / "latest.yml"
    yml.write_text("version: 1.2.0\n")
    url = str(server.make_url("/"))
    code, _, err = await publish_in_process(capsys, "owner/pub", "latest-build", yml, url=url)
    assert code == 0, err
    assert "the tag latest-build is not a semantic version" in err
    assert "updaters will never offer this release" in err
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.3.0", yml, url=url)
    assert code == 0 and "semantic version" not in err


async def test_a_yml_naming_a_missing_or_other_file_is_warned_about(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exe = tmp_path / "MyApp Setup 1.2.0.exe"
    exe.write_bytes(b"installer")
    url = str(server.make_url("/"))
    cases: list[tuple[str, Any]] = [
        (_yml("MyApp-Setup-1.2.0.exe", b"installer"), None),  # spelled with dashes: found
        (_yml("MyApp-Setup-1.2.1.exe", b"installer"), "names MyApp-Setup-1.2.1.exe, which is not"),
        (_yml("MyApp-Setup-1.2.0.exe", b"other bytes"), "gives a sha512 for MyApp-Setup-1.2.0.exe"),
    ]
    for number, (text, warning) in enumerate(cases):
        folder = tmp_path / str(number)
        folder.mkdir()
        yml = folder / "latest.yml"
        yml.write_text(text)
        tag = f"v1.2.{number}"
        code, _, err = await publish_in_process(capsys, "owner/pub", tag, exe, yml, url=url)
        assert code == 0, err
        if warning is None:
            assert "latest.yml" not in err, err
        else:
            assert f"warning: latest.yml {warning}" in err, err


async def test_a_velopack_package_of_another_version_or_id_is_warned_about(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Velopack's client is offered the package's own version and takes the newest package of a
    channel whatever its id: a .nuspec disagreeing with the tag, or with the id the channel's
    earlier packages have, is warned about (the release is published anyway)."""
    url = str(server.make_url("/"))

    def package(folder: str, package_id: str, version: str) -> Path:
        path = tmp_path / folder / f"{package_id}-{version}-linux-full.nupkg"
        path.parent.mkdir()
        path.write_bytes(nupkg(package_id, version, "linux"))
        return path

    first = package("one", "AccApp", "1.0.0")
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.5.0", first, url=url)
    assert code == 0, err
    assert (
        "warning: AccApp-1.0.0-linux-full.nupkg is version 1.0.0 (its .nuspec), the tag is v1.5.0"
        in err
    )

    same = package("two", "AccApp", "1.6.0")
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.6.0", same, url=url)
    assert code == 0 and ".nupkg" not in err, err

    other = package("three", "OtherApp", "1.7.0")
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.7.0", other, url=url)
    assert code == 0, err
    assert (
        "warning: OtherApp-1.7.0-linux-full.nupkg is package OtherApp, but the channel linux has "
        "AccApp" in err
    ), err


async def test_a_linux_package_of_another_version_or_name_is_warned_about(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """apt and dnf order packages by their own version (a prerelease tag v1.2.0-beta.1 is
    1.2.0~beta.1 there) and upgrade by package name: a .deb or .rpm disagreeing with the tag, or
    named otherwise than the repository's earlier packages, is warned about."""
    if shutil.which("rpmbuild") is None:
        pytest.skip("rpmbuild is not installed (make clients-tools installs it as root)")
    url = str(server.make_url("/"))

    def package(folder: str, name: str, data: bytes) -> Path:
        path = tmp_path / folder / name
        path.parent.mkdir()
        path.write_bytes(data)
        return path

    wrong = package("one", "app.deb", deb("acc-app", "1.0.0"))
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.5.0", wrong, url=url)
    assert code == 0, err
    assert "warning: app.deb is version 1.0.0, the tag v1.5.0 is 1.5.0 as apt and dnf" in err

    dashed = package("two", "app.rpm", rpm("acc-app", "1.6.0", release="beta.1"))
    pre = package("three", "app.deb", deb("acc-app", "1.6.0~beta.1"))
    code, _, err = await publish_in_process(
        capsys, "owner/pub", "v1.6.0-beta.1", dashed, pre, url=url
    )
    assert code == 0, err
    assert "app.rpm is version 1.6.0, the tag v1.6.0-beta.1 is 1.6.0~beta.1" in err, err
    assert "app.deb is version" not in err, err

    other = package("four", "other.deb", deb("other-app", "1.7.0"))
    code, _, err = await publish_in_process(capsys, "owner/pub", "v1.7.0", other, url=url)
    assert code == 0, err
    assert "warning: other.deb is package other-app, but the repository's earlier deb " in err
    assert "packages are acc-app" in err, err
