"""`forge release keys create|list|revoke`: the real `forge` command (a subprocess) against a
running releases server; the key it prints opens the private repository's update check."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from forge_common.config import Settings
from forge_releases.service import create_app

from .minisign_support import Signer
from .publish_support import forge_release
from .support import TOKENS, one_repo, rel


@pytest.fixture
async def server(settings: Settings, aiohttp_server: Any, load: Any) -> TestServer:
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": "App-1.0.0-x64.exe", "content": "bytes"}]
    world = one_repo([release], private=True)
    await load(world)
    result: TestServer = await aiohttp_server(create_app(settings), host="127.0.0.1")
    return result


async def keys(
    *args: str, url: str, token: str = TOKENS["owner"], command: str = "keys"
) -> tuple[int, str, str]:
    return await forge_release(command, *args, url=url, token=token)


async def test_create_list_revoke(server: TestServer, db: Any) -> None:
    url = str(server.make_url("/"))
    status, out, err = await keys("create", "owner/app", "desktop app", url=url)
    assert status == 0, err
    key = out.splitlines()[-1]
    assert key.startswith("forge_uk_")
    stored = await db.fetchval("SELECT key_sha256 FROM releases.update_keys")
    assert stored == hashlib.sha256(key.encode()).digest()

    check = server.make_url("/api/v2/repos/owner/app/releases/update").with_query(
        version="0.1.0", platform="windows", arch="x64", key=key
    )
    async with aiohttp.ClientSession() as http, http.get(check) as resp:
        assert resp.status == 200
        assert "signature=" in (await resp.json())["url"]

    status, out, _ = await keys("list", "owner/app", url=url)
    assert status == 0
    key_id, name, creator, _created = out.strip().split("\t")
    assert (name, creator) == ("desktop app", "owner")
    assert key not in out

    status, out, _ = await keys("revoke", "owner/app", key_id, url=url)
    assert status == 0 and f"update key {key_id} revoked" in out
    async with aiohttp.ClientSession() as http, http.get(check) as resp:
        assert resp.status == 404
    assert (await keys("list", "owner/app", url=url))[1] == ""


async def test_clear_messages(server: TestServer) -> None:
    url = str(server.make_url("/"))
    status, _, err = await keys("list", "owner/app", url=url, token=TOKENS["stranger"])
    assert status == 1 and "repository owner/app not found (404)" in err
    status, _, err = await keys("revoke", "owner/app", "999", url=url)
    assert status == 1 and "no such update key" in err
    status, _, err = await keys("list", "owner/app", url=url, token="nope")
    assert status == 1 and "did not accept FORGE_TOKEN" in err
    status, _, err = await keys("list", "app", url=url)
    assert status == 1 and "is not OWNER/REPO" in err


async def test_tauri_key_set_from_the_pub_file_shown_and_removed(
    server: TestServer, tmp_path: Path
) -> None:
    url = str(server.make_url("/"))
    signer = Signer.new()
    pub = tmp_path / "key.pub"  # as `tauri signer generate -w key` writes it
    pub.write_text(signer.tauri_form)
    key_id = signer.key_id[::-1].hex().upper()
    code, out, err = await keys("set", "owner/app", str(pub), url=url, command="tauri-key")
    assert code == 0, err
    assert key_id in out
    code, out, _ = await keys("show", "owner/app", url=url, command="tauri-key")
    assert (code, out.split()) == (0, [key_id, signer.tauri_form])
    code, _, err = await keys("set", "owner/app", "not a key", url=url, command="tauri-key")
    assert code == 1 and "(422)" in err and "public_key" in err
    missing = str(tmp_path / "missing.pub")
    code, _, err = await keys("set", "owner/app", missing, url=url, command="tauri-key")
    assert code == 1 and f"the key file {missing} does not exist" in err and "base64" not in err
    code, _, err = await keys("set", "owner/app", "keys/app.key", url=url, command="tauri-key")
    assert code == 1 and "the key file keys/app.key does not exist" in err
    code, out, _ = await keys("remove", "owner/app", url=url, command="tauri-key")
    assert code == 0 and "removed" in out
    code, _, err = await keys("show", "owner/app", url=url, command="tauri-key")
    assert code == 1 and "no Tauri public key" in err
