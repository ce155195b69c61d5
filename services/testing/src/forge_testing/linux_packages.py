"""Linux packages made by the tests (docs/releases.md "Linux package repositories"): a `.deb` built
by Debian's own `dpkg-deb --build` and an `.rpm` by `rpmbuild` (Debian's `rpm` package), each
holding one small file, for any architecture (nothing is compiled, so any target builds)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

# Debian's architecture names -> rpm's
RPM_ARCHES = {"amd64": "x86_64", "arm64": "aarch64", "armhf": "armv7hl", "i386": "i686"}


def deb(name: str, version: str, arch: str = "amd64", payload: bytes = b"app") -> bytes:
    """A `.deb` of package `name` at `version` (Debian's spelling: `1.2.0~beta.1`) for `arch`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        (root / "DEBIAN").mkdir(parents=True)
        (root / "DEBIAN" / "control").write_text(
            f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\n"
            "Maintainer: forge tests <tests@example.invalid>\nSection: utils\n"
            "Priority: optional\nDescription: a test app\n the app forge's tests publish\n"
        )
        (root / "opt" / name).mkdir(parents=True)
        (root / "opt" / name / "app").write_bytes(payload)
        out = Path(tmp, "out.deb")
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)],
            check=True,
            capture_output=True,
        )
        return out.read_bytes()


def rpm(
    name: str, version: str, arch: str = "amd64", release: str = "1", payload: bytes = b"app"
) -> bytes:
    """An `.rpm` of package `name`, `version`-`release` (rpm's spelling: `1.2.0~beta.1`), for
    the Debian architecture `arch` (rpm's own name, RPM_ARCHES)."""
    target = RPM_ARCHES.get(arch, arch)
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        (top / "SOURCES").mkdir()
        (top / "SOURCES" / "app").write_bytes(payload)
        spec = top / f"{name}.spec"
        spec.write_text(
            f"Name: {name}\nVersion: {version}\nRelease: {release}\nSummary: a test app\n"
            "License: MIT\nURL: https://example.invalid/app\n\n"
            "%description\nthe app forge's tests publish\n\n"
            "%install\n"
            f"mkdir -p %{{buildroot}}/opt/{name}\n"
            f"cp %{{_sourcedir}}/app %{{buildroot}}/opt/{name}/app\n\n"
            f"%files\n/opt/{name}/app\n\n"
            "%changelog\n* Thu Jan 01 2026 forge tests <tests@example.invalid> - 1\n- first\n"
        )
        subprocess.run(
            [
                "rpmbuild",
                "-bb",
                "--quiet",
                f"--target={target}-linux",
                "--define",
                f"_topdir {top}",
                "--define",
                "_build_id_links none",
                "--define",
                "__os_install_post %{nil}",
                "--nodeps",
                str(spec),
            ],
            check=True,
            capture_output=True,
        )
        (built,) = (top / "RPMS").rglob("*.rpm")
        return built.read_bytes()
