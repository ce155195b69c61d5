"""Debian's apt-get and dnf run against forge with configurations of their own (nothing of the
machine's apt or dnf setup is read or changed), for the e2e tests of the Linux repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

TIMEOUT = 120


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=False)


class Apt:
    """apt-get with its own directories (`-o Dir::...`), one deb822 `.sources` with `Signed-By`
    (never `trusted=yes`), and `auth.conf.d` for a private repository."""

    def __init__(self, root: Path, arches: tuple[str, ...] = ("amd64", "arm64")) -> None:
        self.root = root
        for folder in (
            "etc/sources.list.d",
            "etc/apt.conf.d",
            "etc/preferences.d",
            "etc/trusted.gpg.d",
            "etc/auth.conf.d",
            "state/lists/partial",
            "cache/archives/partial",
            "downloads",
        ):
            (root / folder).mkdir(parents=True, exist_ok=True)
        (root / "status").write_text("")
        (root / "etc" / "sources.list").write_text("")
        self.options = [
            f"-oDir={root}",
            f"-oDir::Etc={root / 'etc'}",
            f"-oDir::Etc::sourcelist={root / 'etc' / 'sources.list'}",
            f"-oDir::Etc::sourceparts={root / 'etc' / 'sources.list.d'}",
            f"-oDir::Etc::main={root / 'etc' / 'apt.conf'}",
            f"-oDir::Etc::parts={root / 'etc' / 'apt.conf.d'}",
            f"-oDir::Etc::preferencesparts={root / 'etc' / 'preferences.d'}",
            f"-oDir::Etc::trusted={root / 'etc' / 'trusted.gpg'}",
            f"-oDir::Etc::trustedparts={root / 'etc' / 'trusted.gpg.d'}",
            f"-oDir::Etc::netrcparts={root / 'etc' / 'auth.conf.d'}",
            f"-oDir::State={root / 'state'}",
            f"-oDir::State::status={root / 'status'}",
            f"-oDir::Cache={root / 'cache'}",
            "-oAPT::Sandbox::User=root",
            "-oDebug::NoLocking=1",
            f"-oAPT::Architecture={arches[0]}",
            *(f"-oAPT::Architectures::={arch}" for arch in arches),
            "-oAcquire::Retries=0",
        ]

    def sources(self, uri: str, suite: str, key: bytes) -> None:
        (self.root / "key.asc").write_bytes(key)
        (self.root / "etc" / "sources.list.d" / "app.sources").write_text(
            f"Types: deb\nURIs: {uri}\nSuites: {suite}\nComponents: main\n"
            f"Signed-By: {self.root / 'key.asc'}\n"
        )

    def login(self, machine: str, password: str) -> None:
        (self.root / "etc" / "auth.conf.d" / "app.conf").write_text(
            f"machine {machine}\nlogin update-key\npassword {password}\n"
        )

    def apt_get(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(["apt-get", *self.options, *args])

    def update(self) -> subprocess.CompletedProcess[str]:
        return self.apt_get("update", "--error-on=any")

    def download(self, spec: str) -> bytes:
        folder = self.root / "downloads"
        for old in folder.iterdir():
            old.unlink()
        done = subprocess.run(
            ["apt-get", *self.options, "download", spec],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        (got,) = folder.iterdir()
        return got.read_bytes()


class Dnf:
    """dnf with its own repos directory, install root and cache, `repo_gpgcheck=1`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in ("repos.d", "installroot", "cache", "downloads"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        self.options = [
            f"--setopt=reposdir={root / 'repos.d'}",
            f"--installroot={root / 'installroot'}",
            f"--setopt=cachedir={root / 'cache'}",
            "--releasever=40",
            "--assumeyes",
            "--setopt=retries=1",
            "--disableplugin=local",  # dnf-plugins-core's: a repository of its own
            "--setopt=skip_if_unavailable=False",  # a refused repository is an error
        ]

    def repo(self, text: str) -> None:
        (self.root / "repos.d" / "app.repo").write_text(text)

    def close(self) -> None:
        """Stop the gpg-agent that importing each repository's key started in its keyring
        (dnf leaves them running after it exits)."""
        for keyring in (self.root / "cache").glob("*/pubring"):
            subprocess.run(
                ["gpgconf", "--homedir", str(keyring), "--kill", "gpg-agent"],
                check=False,
                capture_output=True,
            )

    def dnf(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(["dnf", *self.options, *args])

    def makecache(self) -> subprocess.CompletedProcess[str]:
        return self.dnf("makecache", "--refresh")

    def download(self, spec: str) -> bytes:
        folder = self.root / "downloads"
        for old in folder.iterdir():
            old.unlink()
        done = self.dnf("download", f"--destdir={folder}", spec)
        assert done.returncode == 0, done.stdout + done.stderr
        (got,) = folder.iterdir()
        return got.read_bytes()
