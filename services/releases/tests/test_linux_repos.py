"""The apt and dnf repositories (linux/, docs/releases.md "Linux package repositories"): made from
the metadata inside each uploaded `.deb` and `.rpm` (built here by dpkg-deb and rpmbuild, never
read from the file name), signed by the instance's OpenPGP key, which Debian's `sqv` (Sequoia's
policy, as Debian 13's apt applies it) accepts. Real apt-get and dnf read them in
tests-e2e/clients/test_linux_repos.py."""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import shutil
import subprocess
from datetime import timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest
from forge_common.cli import main
from forge_common.config import Settings
from forge_common.keys import DB_POOL
from forge_releases.keys import RELEASE_CACHE
from forge_releases.linux.apt import until_tomorrow
from forge_testing.linux_packages import deb, rpm
from forge_testing.waiting import eventually

from .support import TOKENS, one_repo
from .test_velopack_feed import publish

# Debian's tools these tests build and check with (mk/clients.mk APT_TOOLS installs them as root)
TOOLS = ("sqv", "rpmbuild", "dpkg-deb", "gpg")
pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in TOOLS),
    reason=f"needs {', '.join(TOOLS)} (make clients-tools installs them as root)",
)
BASE = "/owner/app"
OWNER = {"Authorization": f"token {TOKENS['owner']}"}


async def _get(client: Any, path: str, **headers: str) -> bytes:
    resp = await client.get(f"{BASE}{path}", headers=headers)
    assert resp.status == 200, (path, resp.status, await resp.text())
    return await resp.read()


def _paragraphs(text: bytes) -> list[dict[str, str]]:
    found = []
    for block in text.decode().strip().split("\n\n"):
        fields = {}
        for line in block.splitlines():
            if not line.startswith(" "):
                name, _, value = line.partition(": ")
                fields[name] = value
        found.append(fields)
    return found


def sqv(
    tmp: Path, keys: bytes, signature: bytes, signed: bytes, signatures: int = 1
) -> subprocess.CompletedProcess[str]:
    """Debian's `sqv` (Sequoia's policy, as Debian 13's apt verifies): `signatures` good ones."""
    (tmp / "key.asc").write_bytes(keys)
    (tmp / "sig").write_bytes(signature)
    (tmp / "data").write_bytes(signed)
    files = [str(tmp / "key.asc"), str(tmp / "sig"), str(tmp / "data")]
    return subprocess.run(
        ["sqv", "--signatures", str(signatures), "--keyring", *files],
        capture_output=True,
        text=True,
        check=False,
    )


async def test_apt_lists_every_version_and_architecture_from_the_packages_own_control(
    make_client: Any, load: Any, tmp_path: Path
) -> None:
    await load(one_repo([]))
    client = await make_client()
    amd64, arm64 = deb("acc-app", "1.0.0", "amd64"), deb("acc-app", "1.0.0", "arm64")
    # the names say nothing true: what is listed comes from the packages themselves
    await publish(client, "v1.0.0", {"a.deb": amd64, "b.deb": arm64})
    await publish(
        client, "v1.1.0-beta.1", {"c.deb": deb("acc-app", "1.1.0~beta.1")}, prerelease=True
    )
    await publish(client, "v1.2.0", {"d.deb": deb("acc-app", "1.2.0")}, draft=True)

    # read at upload, before any repository request
    read = await client.app[DB_POOL].fetch(
        "SELECT name, version, arch FROM releases.linux_packages ORDER BY asset_id"
    )
    assert [tuple(row) for row in read] == [
        ("acc-app", "1.0.0", "amd64"),
        ("acc-app", "1.0.0", "arm64"),
        ("acc-app", "1.1.0~beta.1", "amd64"),
        ("acc-app", "1.2.0", "amd64"),
    ]
    release = (await _get(client, "/apt/dists/stable/Release")).decode()
    assert "Architectures: amd64 arm64\n" in release
    assert "Acquire-By-Hash: yes" in release and "Valid-Until: " in release
    listed = _paragraphs(await _get(client, "/apt/dists/stable/main/binary-amd64/Packages"))
    assert [(p["Package"], p["Version"]) for p in listed] == [("acc-app", "1.0.0")]
    assert listed[0]["SHA256"] == hashlib.sha256(amd64).hexdigest()
    assert await _get(client, f"/apt/{listed[0]['Filename']}") == amd64

    # a staged release is held back until it reaches 100 % (a package manager has no staging id)
    staged = await publish(client, "v1.3.0", {"e.deb": deb("acc-app", "1.3.0")}, rollout=50)
    beta = _paragraphs(await _get(client, "/apt/dists/beta/main/binary-amd64/Packages"))
    assert sorted(p["Version"] for p in beta) == ["1.0.0", "1.1.0~beta.1"]  # every version
    resp = await client.patch(
        f"/api/v2/repos/owner/app/releases/{staged}", json={"rollout": 100}, headers=OWNER
    )
    assert resp.status == 200, await resp.text()
    beta = _paragraphs(await _get(client, "/apt/dists/beta/main/binary-amd64/Packages"))
    assert sorted(p["Version"] for p in beta) == ["1.0.0", "1.1.0~beta.1", "1.3.0"]
    packed = await _get(client, "/apt/dists/beta/main/binary-amd64/Packages.gz")
    release = (await _get(client, "/apt/dists/beta/Release")).decode()
    digest = hashlib.sha256(packed).hexdigest()
    assert f" {digest} {len(packed):>8} main/binary-amd64/Packages.gz" in release
    assert (
        await _get(client, f"/apt/dists/beta/main/binary-amd64/by-hash/SHA256/{digest}") == packed
    )
    assert gzip.decompress(packed) == await _get(
        client, "/apt/dists/beta/main/binary-amd64/Packages"
    )

    keys = await _get(client, "/apt/key.asc")
    signed = await _get(client, "/apt/dists/beta/Release")
    checked = sqv(tmp_path, keys, await _get(client, "/apt/dists/beta/Release.gpg"), signed)
    assert checked.returncode == 0, checked.stderr
    tampered = sqv(tmp_path, keys, await _get(client, "/apt/dists/beta/Release.gpg"), signed + b" ")
    assert tampered.returncode != 0
    inline = await _get(client, "/apt/dists/beta/InRelease")
    assert inline.startswith(b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512")


async def test_the_rpm_repository_is_createrepo_metadata_signed_over_the_final_repomd(
    make_client: Any, load: Any, tmp_path: Path
) -> None:
    await load(one_repo([]))
    client = await make_client()
    x86, arm = rpm("acc-app", "1.0.0", "amd64"), rpm("acc-app", "1.0.0", "arm64")
    await publish(client, "v1.0.0", {"acc-app.x86_64.rpm": x86, "acc-app.aarch64.rpm": arm})
    document = await _get(client, "/rpm/stable/repodata/repomd.xml")
    signature = await _get(client, "/rpm/stable/repodata/repomd.xml.asc")
    checked = sqv(tmp_path, await _get(client, "/rpm/key.asc"), signature, document)
    assert checked.returncode == 0, checked.stderr
    href = document.decode().split('<data type="primary">')[1].split('href="')[1].split('"')[0]
    primary = gzip.decompress(await _get(client, f"/rpm/stable/{href}")).decode()
    assert primary.count("<name>acc-app</name>") == 2
    assert "<arch>aarch64</arch>" in primary and "<arch>x86_64</arch>" in primary
    assert hashlib.sha256(x86).hexdigest() in primary
    location = primary.split('<location href="')[1].split('"')[0]
    assert await _get(client, f"/rpm/stable/{location}") in (x86, arm)
    repo = (await _get(client, "/rpm/stable.repo")).decode()
    assert "repo_gpgcheck=1" in repo and "/owner/app/rpm/stable/" in repo


async def _forge(argv: list[str], settings: Settings, capsys: Any) -> tuple[int, str]:
    env = {"DATABASE_URL": settings.database_url, "LOG_LEVEL": "ERROR"}
    status = await asyncio.to_thread(main, argv, env)
    return status, capsys.readouterr().out


async def test_a_rotation_signs_with_both_keys_then_the_new_one_alone(
    make_client: Any, load: Any, settings: Settings, tmp_path: Path, capsys: Any
) -> None:
    """`forge linux-key add` makes a second key sign beside the first (either key alone
    verifies, as a fleet that has only one of them does); `promote` and `retire` end it."""
    await load(one_repo([]))
    client = await make_client(wait_cache=True)
    await publish(client, "v1.0.0", {"a.deb": deb("acc-app", "1.0.0")})
    old_key = await _get(client, "/apt/key.asc")
    release = await _get(client, "/apt/dists/stable/Release")
    assert (
        sqv(
            tmp_path, old_key, await _get(client, "/apt/dists/stable/Release.gpg"), release
        ).returncode
        == 0
    )
    (old,) = [
        line.split()[0]
        for line in (await _forge(["linux-key", "list"], settings, capsys))[1].splitlines()
    ]

    status, out = await _forge(["linux-key", "add"], settings, capsys)
    assert status == 0, out
    new = out.split()[0]
    new_key = await client.app[DB_POOL].fetchval(
        "SELECT public_key FROM releases.signing_keys WHERE fingerprint = $1", new
    )

    async def both_sign() -> bool:
        inline = await _get(client, "/apt/dists/stable/InRelease")
        return inline.count(b"-----BEGIN PGP SIGNATURE-----") == 1 and len(
            await _get(client, "/apt/key.asc")
        ) > len(old_key)

    await eventually(both_sign, what="both keys in key.asc")
    signature = await _get(client, "/apt/dists/stable/Release.gpg")
    for alone in (old_key, new_key.encode(), await _get(client, "/apt/key.asc")):
        checked = sqv(tmp_path, alone, signature, release)
        assert checked.returncode == 0, checked.stderr
    keys = await _get(client, "/apt/key.asc")
    checked = sqv(tmp_path, keys, signature, release, signatures=2)
    assert checked.returncode == 0, checked.stderr  # two good signatures in one Release.gpg

    assert (await _forge(["linux-key", "retire", old], settings, capsys))[0] == 1  # the current
    assert (await _forge(["linux-key", "promote", new], settings, capsys))[0] == 0
    assert (await _forge(["linux-key", "retire", new], settings, capsys))[0] == 1  # now current
    assert (await _forge(["linux-key", "retire", old], settings, capsys))[0] == 0

    async def old_gone() -> bool:
        signature = await _get(client, "/apt/dists/stable/Release.gpg")
        return sqv(tmp_path, old_key, signature, release).returncode != 0

    await eventually(old_gone, what="the retired key signs no more")
    keys = await _get(client, "/apt/key.asc")
    assert (
        sqv(tmp_path, keys, await _get(client, "/apt/dists/stable/Release.gpg"), release).returncode
        == 0
    )
    assert (await _forge(["linux-key", "list"], settings, capsys))[1].split()[:2] == [
        new,
        "current",
    ]


async def test_the_repository_page_shows_the_one_line_setups(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client()
    await publish(
        client, "v1.0.0", {"a.deb": deb("acc-app", "1.0.0"), "b.rpm": rpm("acc-app", "1.0.0")}
    )
    page = await (await client.get(BASE)).text()
    assert "Install on Linux" in page
    assert "Signed-By: /etc/apt/keyrings/owner-app.asc" in page
    assert "/owner/app/apt/key.asc" in page and "sudo apt install acc-app" in page
    assert "/owner/app/rpm/stable.repo" in page and "sudo dnf install acc-app" in page


async def test_every_published_version_stays_listed_beyond_the_update_checks_fifty(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([]))
    client = await make_client()
    first = deb("acc-app", "1.0.0")
    await publish(client, "v1.0.0", {"app.deb": first})
    for minor in range(1, 52):
        await publish(client, f"v1.{minor}.0", {"app.deb": deb("acc-app", f"1.{minor}.0")})
    listed = _paragraphs(await _get(client, "/apt/dists/stable/main/binary-amd64/Packages"))
    assert len(listed) == 52
    oldest = next(p for p in listed if p["Version"] == "1.0.0")
    assert await _get(client, f"/apt/{oldest['Filename']}") == first


async def test_a_private_repository_answers_an_update_key_given_as_the_basic_password(
    make_client: Any, load: Any
) -> None:
    """apt's auth.conf.d and dnf's username/password send the key as an HTTP Basic password; a
    wrong or revoked key answers as a repository that does not exist. The public keys never
    carry the secret one."""
    await load(one_repo([], private=True))
    client = await make_client()
    await publish(client, "v1.0.0", {"a.deb": deb("acc-app", "1.0.0")})
    created = await client.post(
        "/api/v2/repos/owner/app/update_keys", json={"name": "apt"}, headers=OWNER
    )
    assert created.status == 201, await created.text()
    key, key_id = (await created.json())["key"], (await created.json())["id"]

    def basic(password: str) -> str:
        return "Basic " + base64.b64encode(f"anyone:{password}".encode()).decode()

    path = f"{BASE}/apt/dists/stable/InRelease"
    assert (await client.get(path)).status == 401  # as every read of a private repository
    assert (await client.get(path, headers={"Authorization": basic(key)})).status == 200
    keys = await client.get(f"{BASE}/apt/key.asc", headers={"Authorization": basic(key)})
    assert b"PUBLIC KEY" in await keys.read() and b"PRIVATE" not in await keys.read()
    wrong = basic("forge_uk_" + "0" * 40)
    assert (await client.get(path, headers={"Authorization": wrong})).status == 404
    revoked = await client.delete(f"/api/v2/repos/owner/app/update_keys/{key_id}", headers=OWNER)
    assert revoked.status == 204
    assert (await client.get(path, headers={"Authorization": basic(key)})).status == 404


async def test_release_is_dated_today_valid_a_week_and_dropped_when_a_day_starts(
    make_client: Any, load: Any
) -> None:
    """`Valid-Until` makes a replayed old Release fail; the kept Release answers are dropped at
    each day's start (resign_daily), so a repository nobody publishes to is signed again."""
    await load(one_repo([]))
    client = await make_client(wait_cache=True)
    await publish(client, "v1.0.0", {"a.deb": deb("acc-app", "1.0.0")})
    fields = _paragraphs(await _get(client, "/apt/dists/stable/Release"))[0]
    date = parsedate_to_datetime(fields["Date"])
    assert (date.hour, date.minute, date.second) == (0, 0, 0)
    assert parsedate_to_datetime(fields["Valid-Until"]) - date == timedelta(days=7)
    assert until_tomorrow(86_400 * 3 + 10) == 86_390

    cache = client.app[RELEASE_CACHE]

    def kept() -> list[str]:
        answers = [r.answers for r in cache._repos.values()]
        return [key for found in answers for key in found if key.startswith("feed apt ")]

    async def is_kept() -> bool:  # once the publish's own notification has been heard
        await _get(client, "/apt/dists/stable/Release")
        return kept() == ["feed apt stable Release"]

    await eventually(is_kept, what="the Release answer kept")
    cache.drop_answers("feed apt ")
    assert kept() == []
    assert _paragraphs(await _get(client, "/apt/dists/stable/Release"))[0] == fields


async def test_an_operators_own_secret_key_is_taken_and_signs(
    make_client: Any, load: Any, settings: Settings, tmp_path: Path, capsys: Any
) -> None:
    """`forge linux-key add --secret-key FILE`: a key made elsewhere (here by the operator's own
    gpg) becomes the instance's key and signs; what is not one secret key is refused."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    gpg = ["gpg", "--homedir", str(home), "--batch", "--pinentry-mode", "loopback"]
    made = await asyncio.to_thread(
        subprocess.run,
        [*gpg, "--passphrase", "", "--quick-generate-key", "operator", "ed25519", "sign", "never"],
        capture_output=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    secret = await asyncio.to_thread(
        subprocess.run, [*gpg, "--armor", "--export-secret-keys"], capture_output=True, check=True
    )
    (tmp_path / "operator.asc").write_bytes(secret.stdout)
    (tmp_path / "nothing.asc").write_text("not a key")

    status, _ = await _forge(
        ["linux-key", "add", "--secret-key", str(tmp_path / "nothing.asc")], settings, capsys
    )
    assert status == 1
    status, out = await _forge(
        ["linux-key", "add", "--secret-key", str(tmp_path / "operator.asc")], settings, capsys
    )
    assert status == 0 and out.split()[1] == "current", out
    await load(one_repo([]))
    client = await make_client()
    await publish(client, "v1.0.0", {"a.deb": deb("acc-app", "1.0.0")})
    public = await asyncio.to_thread(
        subprocess.run, [*gpg, "--armor", "--export"], capture_output=True, check=True
    )
    release = await _get(client, "/apt/dists/stable/Release")
    signature = await _get(client, "/apt/dists/stable/Release.gpg")
    checked = sqv(tmp_path, public.stdout, signature, release)
    assert checked.returncode == 0, checked.stderr
