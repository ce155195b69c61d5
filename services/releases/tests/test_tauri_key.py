"""A repository's Tauri public key (docs/releases.md "Tauri public key"): set, read and
removed through the API; while it is set, a `.sig` that does not verify against the file it signs
is refused with 422 whichever of the two arrives second, and nothing of the refused upload stays.

Signatures are made as `tauri signer sign` makes them (minisign_support.Signer), with a fresh key
per test; tests-e2e/clients/test_updaters.py uses the real `tauri signer`."""

from __future__ import annotations

import base64
import io
import os
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.service import create_app

from .minisign_support import Signer
from .publish_support import api, auth, publish_world, stored_files
from .support import error_of

Client = TestClient[Any, Any]
KEY = "/api/v2/repos/owner/{}/tauri_key"
BUNDLE = b"a tauri bundle " * 1000


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any, load: Any) -> Client:
    await load(publish_world())
    result: Client = await aiohttp_client(create_app(settings))
    return result


@pytest.fixture
def signer() -> Signer:
    return Signer.new()


async def _set(client: Client, key: str, repo: str = "pub", caller: str = "owner") -> Any:
    return await client.put(KEY.format(repo), json={"public_key": key}, headers=auth(caller))


async def _release(client: Client, tag: str = "v2.0.0") -> int:
    resp = await client.post(api("owner/pub"), json={"tag_name": tag}, headers=auth("writer"))
    assert resp.status == 201
    return int((await resp.json())["id"])


async def _upload(client: Client, release_id: int, name: str, data: bytes) -> Any:
    return await client.post(
        f"{api('owner/pub')}/{release_id}/assets?name={name}",
        data=io.BytesIO(data),
        headers={**auth("writer"), "Content-Type": "application/octet-stream"},
    )


async def _asset_names(client: Client, tag: str = "v2.0.0") -> set[str]:
    resp = await client.get(f"{api('owner/pub')}/{tag}", headers=auth("writer"))
    return {asset["name"] for asset in (await resp.json())["assets"]}


# --- the key: set, read, removed ------------------------------------------------------------


async def test_admin_sets_the_key_in_any_form_tauri_prints_and_reads_it_back(
    client: Client, signer: Signer
) -> None:
    assert (await client.get(KEY.format("pub"))).status == 404
    for form in (signer.tauri_form, signer.pub_file, signer.line):
        resp = await _set(client, form)
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        assert body["public_key"] == signer.tauri_form  # what tauri.conf.json's pubkey holds
        assert body["key_id"] == signer.key_id[::-1].hex().upper()
        assert body["updated_by"] == "owner"
    read = await client.get(KEY.format("pub"))  # anyone who can read the repository
    assert read.status == 200 and (await read.json())["public_key"] == signer.tauri_form
    assert read.headers["Cache-Control"] == "no-store"
    assert (await client.delete(KEY.format("pub"), headers=auth("owner"))).status == 204
    gone = await client.get(KEY.format("pub"))
    assert gone.status == 404 and error_of(await gone.json())[0] == "TauriKeyNotFound"
    assert (await client.delete(KEY.format("pub"), headers=auth("owner"))).status == 404


@pytest.mark.parametrize(
    ("caller", "repo", "status"),
    [
        ("anonymous", "pub", 401),
        ("writer", "pub", 403),  # publishing is not administering
        ("stranger", "priv", 404),  # a private repository it cannot see does not exist
        ("anonymous", "priv", 401),  # as every write (docs/access.md)
        ("repoadmin", "pub", 200),
    ],
)
async def test_only_repository_admins_set_the_key(
    client: Client, signer: Signer, caller: str, repo: str, status: int
) -> None:
    assert (await _set(client, signer.tauri_form, repo, caller)).status == status


async def test_a_private_repositorys_key_is_as_hidden_as_the_repository(
    client: Client, signer: Signer
) -> None:
    assert (await _set(client, signer.tauri_form, "priv")).status == 200
    assert (await client.get(KEY.format("priv"), headers=auth("reader"))).status == 200
    hidden = await client.get(KEY.format("priv"), headers=auth("stranger"))
    missing = await client.get(KEY.format("nothere"), headers=auth("stranger"))
    assert hidden.status == missing.status == 404
    assert error_of(await hidden.json()) == error_of(await missing.json())


@pytest.mark.parametrize(
    "value",
    ["", "not a key", base64.b64encode(b"untrusted comment: x\nRWQ=\n").decode(), "RW" + "A" * 54],
)
async def test_a_value_that_is_not_a_minisign_public_key_is_422(client: Client, value: str) -> None:
    resp = await _set(client, value)
    assert resp.status == 422
    code, message = error_of(await resp.json())
    assert code == "ValidationFailed" and message.startswith("public_key ")


# --- uploads while a key is set --------------------------------------------------------------


async def test_a_good_signature_is_accepted_and_served_by_the_tauri_feed(
    client: Client, signer: Signer
) -> None:
    assert (await _set(client, signer.tauri_form)).status == 200
    rid = await _release(client)
    assert (await _upload(client, rid, "App_x64.app.tar.gz", BUNDLE)).status == 201
    sig = signer.sign(BUNDLE)
    assert (await _upload(client, rid, "App_x64.app.tar.gz.sig", sig)).status == 201
    feed = await client.get(f"{api('owner/pub')}/feeds/tauri/darwin/x86_64/1.0.0")
    assert feed.status == 200 and (await feed.json())["signature"] == sig.decode()


async def test_a_signature_over_other_bytes_is_refused_and_nothing_of_it_stays(
    client: Client, signer: Signer, settings: Settings
) -> None:
    assert (await _set(client, signer.tauri_form)).status == 200
    rid = await _release(client)
    assert (await _upload(client, rid, "App_x64.app.tar.gz", BUNDLE)).status == 201
    files = stored_files(settings.storage_path)
    bad = signer.sign(BUNDLE + b"tampered")
    resp = await _upload(client, rid, "App_x64.app.tar.gz.sig", bad)
    assert resp.status == 422, await resp.text()
    code, message = error_of(await resp.json())
    assert code == "TauriSignatureInvalid"
    assert message.startswith("App_x64.app.tar.gz.sig does not verify")
    assert await _asset_names(client) == {"App_x64.app.tar.gz"}
    assert stored_files(settings.storage_path) == files
    # the feed has no signature to hand out, so it offers no update rather than a bad one
    feed = await client.get(f"{api('owner/pub')}/feeds/tauri/darwin/x86_64/1.0.0")
    assert feed.status == 204


async def test_the_file_arriving_after_its_signature_is_checked_too(
    client: Client, signer: Signer
) -> None:
    assert (await _set(client, signer.tauri_form)).status == 200
    rid = await _release(client)
    sig = signer.sign(BUNDLE)
    assert (await _upload(client, rid, "App_x64.app.tar.gz.sig", sig)).status == 201
    other = await _upload(client, rid, "App_x64.app.tar.gz", b"other bytes")
    assert other.status == 422 and error_of(await other.json())[0] == "TauriSignatureInvalid"
    assert await _asset_names(client) == {"App_x64.app.tar.gz.sig"}
    assert (await _upload(client, rid, "App_x64.app.tar.gz", BUNDLE)).status == 201


@pytest.mark.parametrize(
    ("make_sig", "problem"),
    [
        (lambda s: Signer.new().sign(BUNDLE), "made with another key"),
        (lambda s: _comment_swapped(s.sign(BUNDLE)), "trusted comment"),
        (lambda s: b"-----BEGIN PGP SIGNATURE-----\n...", "is not"),
        (lambda s: os.urandom(100), "is not"),
        (lambda s: b"A" * 5000, "is not"),  # over the size of any signature file
    ],
)
async def test_signatures_that_tauri_would_refuse_are_refused(
    client: Client, signer: Signer, make_sig: Any, problem: str
) -> None:
    assert (await _set(client, signer.tauri_form)).status == 200
    rid = await _release(client)
    assert (await _upload(client, rid, "App.AppImage.tar.gz", BUNDLE)).status == 201
    resp = await _upload(client, rid, "App.AppImage.tar.gz.sig", make_sig(signer))
    assert resp.status == 422, await resp.text()
    assert problem in error_of(await resp.json())[1]


def _comment_swapped(sig: bytes) -> bytes:
    """The same signature with its trusted comment changed (as minisign -V would notice)."""
    lines = base64.b64decode(sig).decode().split("\n")
    lines[2] = "trusted comment: timestamp:2\tfile:Other.tar.gz"
    return base64.b64encode("\n".join(lines).encode())


async def test_without_a_key_signatures_are_stored_as_they_come(
    client: Client, signer: Signer
) -> None:
    rid = await _release(client)
    assert (await _upload(client, rid, "App_x64.app.tar.gz", BUNDLE)).status == 201
    bad = signer.sign(b"other bytes")
    assert (await _upload(client, rid, "App_x64.app.tar.gz.sig", bad)).status == 201


async def test_a_signature_alone_and_unrelated_files_are_not_checked(
    client: Client, signer: Signer
) -> None:
    assert (await _set(client, signer.tauri_form)).status == 200
    rid = await _release(client)
    # no file of that name (yet): nothing to verify against
    assert (await _upload(client, rid, "Lone.tar.gz.sig", b"anything")).status == 201
    assert (await _upload(client, rid, "App-2.0.0-x64.zip", b"zip")).status == 201
    assert await _asset_names(client) == {"Lone.tar.gz.sig", "App-2.0.0-x64.zip"}
