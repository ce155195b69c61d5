"""Debian's own apt-get and dnf against forge's apt and dnf repositories through nginx
(docs/releases.md "Linux package repositories"), each with a configuration of its own: a deb822
`.sources` with `Signed-By` (no `trusted=yes`) and the `.repo` file forge serves
(`repo_gpgcheck=1`).

- apt-get update finds 1.0.0 (amd64 and arm64), verifies `InRelease` against `key.asc`, and
  `apt-get download` fetches the bytes uploaded; after 1.1.0 is published it finds both versions.
- dnf makecache verifies `repomd.xml.asc` and `dnf download` fetches the uploaded `.rpm`; after
  1.1.0 is published it downloads 1.1.0, and 1.0.0 still.
- A mirror that changes one byte of `InRelease`'s text, of `Packages` or of `repomd.xml` is
  refused by the client: the signatures are checked.
- A private repository: an update key as the password (apt's auth.conf.d, dnf's
  username/password) works; once revoked, the client is refused.

The packages are built here by dpkg-deb and rpmbuild (forge_testing.linux_packages).
"""

from __future__ import annotations

import gzip
import shutil
import threading
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from forge_testing.linux_clients import Apt, Dnf
from forge_testing.linux_packages import deb, rpm

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

TOKEN = "alice-linux-token"
WORLD = {
    "users": [{"name": "alice", "tokens": [TOKEN]}],
    "repos": [
        {"owner": "alice", "name": "desk"},
        {"owner": "alice", "name": "secret", "private": True},
        {"owner": "alice", "name": "fedora"},
    ],
}
ALICE = {"Authorization": f"token {TOKEN}"}
NAME = "acc-desk"


def packages(version: str) -> dict[str, bytes]:
    payload = f"desk {version}".encode() * 100
    return {
        f"desk-{version}-amd64.deb": deb(NAME, version, "amd64", payload),
        f"desk-{version}-arm64.deb": deb(NAME, version, "arm64", payload),
        f"desk-{version}.x86_64.rpm": rpm(NAME, version, "amd64", payload=payload),
    }


@pytest.fixture(autouse=True)
def no_gpg_agent_left(tmp_path: Path) -> Iterator[None]:
    """dnf leaves running the gpg-agent it started to import each repository's key."""
    yield
    if (tmp_path / "dnf").is_dir():
        Dnf(tmp_path / "dnf").close()


@pytest.fixture(scope="module")
def first(stack: Stack) -> dict[str, bytes]:
    """alice/desk and alice/secret at v1.0.0."""
    for tool in ("apt-get", "dnf", "rpmbuild", "dpkg-deb"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (make clients-tools installs it as root)")
    files = packages("1.0.0")
    for repo in ("desk", "secret"):
        stack.publish(f"alice/{repo}", "v1.0.0", files, ALICE)
    return files


def key(stack: Stack, path: str) -> bytes:
    answer = stack.get(path)
    assert answer.status == 200, answer.body
    return answer.body


def test_apt_get_updates_verifies_and_downloads_then_sees_the_next_release(
    stack: Stack, first: dict[str, bytes], tmp_path: Path
) -> None:
    apt = Apt(tmp_path / "apt")
    apt.sources(f"{stack.base_url}alice/desk/apt/", "stable", key(stack, "/alice/desk/apt/key.asc"))
    done = apt.update()
    assert done.returncode == 0, done.stdout + done.stderr
    assert apt.download(f"{NAME}:amd64=1.0.0") == first["desk-1.0.0-amd64.deb"]
    assert apt.download(f"{NAME}:arm64=1.0.0") == first["desk-1.0.0-arm64.deb"]

    later = packages("1.1.0")
    stack.publish("alice/desk", "v1.1.0", later, ALICE)
    done = apt.update()
    assert done.returncode == 0, done.stdout + done.stderr
    assert apt.download(f"{NAME}:amd64") == later["desk-1.1.0-amd64.deb"]  # the newest
    assert apt.download(f"{NAME}:amd64=1.0.0") == first["desk-1.0.0-amd64.deb"]  # still listed


def test_dnf_makecache_verifies_repomd_and_downloads_then_sees_the_next_release(
    stack: Stack, first: dict[str, bytes], tmp_path: Path
) -> None:
    stack.publish("alice/fedora", "v1.0.0", first, ALICE)
    dnf = Dnf(tmp_path / "dnf")
    dnf.repo(key(stack, "/alice/fedora/rpm/stable.repo").decode())
    done = dnf.makecache()
    assert done.returncode == 0, done.stdout + done.stderr
    assert dnf.download(f"{NAME}-1.0.0") == first["desk-1.0.0.x86_64.rpm"]

    later = packages("1.1.0")
    stack.publish("alice/fedora", "v1.1.0", later, ALICE)
    done = dnf.makecache()
    assert done.returncode == 0, done.stdout + done.stderr
    assert dnf.download(NAME) == later["desk-1.1.0.x86_64.rpm"]  # the newest
    assert dnf.download(f"{NAME}-1.0.0") == first["desk-1.0.0.x86_64.rpm"]  # still listed


class Mirror:
    """A mirror in front of forge that changes what `tamper` changes on the way."""

    def __init__(self, upstream: str, tamper: Callable[[str, bytes], bytes]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # http.server calls it by this name
                try:
                    with urllib.request.urlopen(upstream + self.path.lstrip("/")) as got:  # noqa: S310
                        body = tamper(self.path, got.read())
                        status = got.status
                except urllib.error.HTTPError as exc:
                    body, status = exc.read(), exc.code
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def mirror(stack: Stack) -> Iterator[Callable[[Callable[[str, bytes], bytes]], Mirror]]:
    started: list[Mirror] = []

    def start(tamper: Callable[[str, bytes], bytes]) -> Mirror:
        started.append(Mirror(stack.base_url, tamper))
        return started[-1]

    yield start
    for each in started:
        each.server.shutdown()
        each.server.server_close()


def _changed(path: str, body: bytes, ending: str, old: bytes, new: bytes) -> bytes:
    """`body` with `old` replaced by `new` when the path ends with `ending` (or `ending.gz`)."""
    if path.endswith(f"{ending}.gz"):
        return gzip.compress(gzip.decompress(body).replace(old, new, 1))
    return body.replace(old, new, 1) if path.endswith(ending) else body


@pytest.mark.parametrize(
    ("ending", "old", "new", "refusal"),
    [
        ("/InRelease", b"Label: alice/desk", b"Label: alice/dEsk", "BADSIG"),
        ("/Packages", b"Version: 1.0.0", b"Version: 1.0.1", "Hashes of expected file"),
    ],
    ids=["InRelease", "Packages"],
)
def test_apt_refuses_tampered_metadata(
    stack: Stack,
    first: dict[str, bytes],
    mirror: Callable[[Callable[[str, bytes], bytes]], Mirror],
    tmp_path: Path,
    ending: str,
    old: bytes,
    new: bytes,
    refusal: str,
) -> None:
    served = mirror(lambda path, body: _changed(path, body, ending, old, new))
    apt = Apt(tmp_path / "apt", ("amd64",))
    apt.sources(f"{served.url}alice/desk/apt/", "stable", key(stack, "/alice/desk/apt/key.asc"))
    done = apt.apt_get("update", "--error-on=any", "-oAcquire::By-Hash=no")
    assert done.returncode != 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert (
        ("BADSIG" in said or "NOSPLIT" in said or "not signed" in said)
        if refusal == "NOSPLIT"
        else refusal in said
    ), said


def test_dnf_refuses_a_tampered_repomd(
    stack: Stack,
    first: dict[str, bytes],
    mirror: Callable[[Callable[[str, bytes], bytes]], Mirror],
    tmp_path: Path,
) -> None:
    served = mirror(
        lambda path, body: _changed(path, body, "/repomd.xml", b"<revision>", b"<revision>1")
    )
    dnf = Dnf(tmp_path / "dnf")
    repo = key(stack, "/alice/desk/rpm/stable.repo").decode()
    dnf.repo(repo.replace(f"baseurl={stack.base_url}", f"baseurl={served.url}"))
    done = dnf.makecache()
    assert done.returncode != 0, done.stdout + done.stderr
    assert "repomd.xml GPG signature verification error" in done.stdout + done.stderr


def test_a_private_repository_with_an_update_key_until_it_is_revoked(
    stack: Stack, first: dict[str, bytes], tmp_path: Path
) -> None:
    created = stack.request(
        "POST",
        "/api/v2/repos/alice/secret/update_keys",
        {**ALICE, "Content-Type": "application/json"},
        b'{"name": "linux"}',
    )
    assert created.status == 201, created.body
    update_key, key_id = created.json()["key"], created.json()["id"]
    apt = Apt(tmp_path / "apt", ("amd64",))
    apt.sources(
        f"{stack.base_url}alice/secret/apt/", "stable", key(stack, "/alice/desk/apt/key.asc")
    )
    apt.login(f"{stack.base_url}alice/secret/apt", update_key)
    dnf = Dnf(tmp_path / "dnf")
    repo = key(stack, "/alice/desk/rpm/stable.repo").decode().replace("alice/desk", "alice/secret")
    dnf.repo(repo + f"username=update-key\npassword={update_key}\n")

    done = apt.update()
    assert done.returncode == 0, done.stdout + done.stderr
    assert apt.download(f"{NAME}:amd64=1.0.0") == first["desk-1.0.0-amd64.deb"]
    done = dnf.makecache()
    assert done.returncode == 0, done.stdout + done.stderr
    assert dnf.download(f"{NAME}-1.0.0") == first["desk-1.0.0.x86_64.rpm"]

    revoked = stack.request("DELETE", f"/api/v2/repos/alice/secret/update_keys/{key_id}", ALICE)
    assert revoked.status == 204
    assert apt.update().returncode != 0
    assert dnf.makecache().returncode != 0
