"""Publishing API, assets: upload (raw body and multipart), delete, limits, cut-off uploads.

The body is streamed to storage recording size, SHA-1, SHA-256 and SHA-512; 201
attachment; a duplicate name is 409; a bad name is 422; over the configured limit is 413; an
upload that fails or is cut off leaves no asset and no stray file; events with each change only.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.options import Options
from forge_releases.service import create_app
from forge_testing.waiting import eventually

from .publish_support import api, auth, outbox, publish_world, stored_files

Client = TestClient[Any, Any]
LIMIT = 1024 * 1024


@pytest.fixture
async def client(settings: Settings, aiohttp_client: Any, load: Any) -> Client:
    await load(publish_world())
    app = create_app(replace(settings, max_upload_bytes=LIMIT))
    result: Client = await aiohttp_client(app)
    return result


async def new_release(client: Client, tag: str = "v2.0.0", **extra: Any) -> int:
    resp = await client.post(
        api("owner/pub"), json={"tag_name": tag, **extra}, headers=auth("writer")
    )
    assert resp.status == 201
    return int((await resp.json())["id"])


def assets_url(release_id: int, name: str | None = None, repo: str = "owner/pub") -> str:
    query = f"?name={name}" if name is not None else ""
    return f"{api(repo)}/{release_id}/assets{query}"


async def upload(
    client: Client, release_id: int, name: str, data: bytes, caller: str = "writer"
) -> aiohttp.ClientResponse:
    return await client.post(
        assets_url(release_id, name),
        data=io.BytesIO(data),
        headers={**auth(caller), "Content-Type": "application/octet-stream"},
    )


async def test_raw_upload_201_records_size_and_digests(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)
    data = bytes(range(256)) * 1000
    resp = await upload(client, rid, "App-2.0.0-x64.zip", data)
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert body["name"] == "App-2.0.0-x64.zip"
    assert body["size"] == len(data) and body["download_count"] == 0
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    assert body["browser_download_url"] == (
        "http://forge.test/owner/pub/releases/download/v2.0.0/App-2.0.0-x64.zip"
    )
    row = await db.fetchrow("SELECT * FROM releases.assets WHERE id = $1", body["id"])
    assert row["sha1"] == hashlib.sha1(data).hexdigest()  # noqa: S324 - a checksum, as recorded
    assert row["sha512"] == hashlib.sha512(data).hexdigest()
    assert row["content_type"] == "application/zip"  # octet-stream says nothing: guessed
    # the download returns the same bytes
    download = await client.get(urlsplit(body["browser_download_url"]).path)
    assert download.status == 200 and await download.read() == data
    # and the release lists it
    release = await (await client.get(f"{api('owner/pub')}/{rid}")).json()
    assert [a["id"] for a in release["assets"]] == [body["id"]]
    # the event
    event = (await outbox(db))[-1]
    assert event["type"] == "release.asset.uploaded"
    payload = event["payload"]
    assert (payload["asset_id"], payload["asset_name"], payload["size"]) == (
        body["id"],
        "App-2.0.0-x64.zip",
        len(data),
    )
    assert payload["tag"] == "v2.0.0" and payload["release_id"] == rid
    # stored under its SHA-256; nothing left in the incoming folder
    assert body["sha256"] in {p.name for p in stored_files(settings.storage_path)}
    assert list((settings.storage_path / "incoming").iterdir()) == []


async def test_multipart_upload_uses_the_file_part(client: Client, db: Any) -> None:
    rid = await new_release(client)
    form = aiohttp.FormData()
    form.add_field("note", "ignored")
    form.add_field(
        "attachment", io.BytesIO(b"setup bytes"), filename="Setup.exe", content_type="x-app/exe"
    )
    resp = await client.post(assets_url(rid), data=form, headers=auth("writer"))
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert (body["name"], body["size"]) == ("Setup.exe", 11)
    assert body["sha256"] == hashlib.sha256(b"setup bytes").hexdigest()
    ctype = await db.fetchval("SELECT content_type FROM releases.assets WHERE id = $1", body["id"])
    assert ctype == "x-app/exe"
    # ?name= wins over the part's file name
    form = aiohttp.FormData()
    form.add_field("file", io.BytesIO(b"x"), filename="ignored.bin")
    resp = await client.post(assets_url(rid, "RELEASES"), data=form, headers=auth("writer"))
    assert resp.status == 201 and (await resp.json())["name"] == "RELEASES"


async def test_multipart_without_a_file_part_is_422(client: Client, settings: Settings) -> None:
    rid = await new_release(client)
    form = aiohttp.FormData(default_to_multipart=True)
    form.add_field("note", "no file here")
    form.add_field("other", "still none")
    resp = await client.post(assets_url(rid, "a.zip"), data=form, headers=auth("writer"))
    assert resp.status == 422
    resp = await client.post(
        assets_url(rid, "a.zip"),
        data=b"--nope\r\n",
        headers={**auth("writer"), "Content-Type": "multipart/form-data; boundary=xyz"},
    )
    assert resp.status in (400, 422)
    assert len(stored_files(settings.storage_path)) == 1  # the world's file only


async def test_bad_asset_names_are_422(client: Client, db: Any, settings: Settings) -> None:
    rid = await new_release(client)
    before = await outbox(db)
    for name in [
        "a/b.zip",
        "a%2Fb.zip",
        "a%5Cb.zip",
        "..",
        "a..zip",
        "a%00b",
        "",
        "%20",
        "%01x",
        ".",
    ]:
        resp = await upload(client, rid, name, b"data")
        assert resp.status == 422, name
        assert (await resp.json())["error"]["code"] == "ValidationFailed"
    resp = await client.post(assets_url(rid), data=b"data", headers=auth("writer"))
    assert resp.status == 422  # no name at all
    assert await outbox(db) == before
    assert len(stored_files(settings.storage_path)) == 1  # only the world's file
    for name in ["%FF.zip", "%ED%A0%80.zip"]:  # not UTF-8, a lone surrogate: never a 500
        resp = await upload(client, rid, name, b"data")
        assert resp.status in (201, 422), name


async def test_duplicate_name_is_409_and_leaves_nothing(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)
    assert (await upload(client, rid, "app.zip", b"first")).status == 201
    events = await outbox(db)
    resp = await upload(client, rid, "app.zip", b"second")
    assert resp.status == 409
    assert await outbox(db) == events
    assert len(stored_files(settings.storage_path)) == 2
    # the same name in another release is fine
    other = await new_release(client, "v3.0.0")
    assert (await upload(client, other, "app.zip", b"second")).status == 201


async def test_racing_uploads_of_one_name_give_one_asset(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)
    results = await asyncio.gather(
        *(upload(client, rid, "same.zip", f"bytes {i}".encode()) for i in range(5))
    )
    assert sorted(r.status for r in results) == [201] + [409] * 4
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE name = 'same.zip'") == 1
    # the world's file and the winner's: the losers' files are gone
    assert len(stored_files(settings.storage_path)) == 2


async def test_upload_over_the_limit_is_413_by_content_length(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)
    events = await outbox(db)
    resp = await upload(client, rid, "big.zip", b"x" * (LIMIT + 1))
    assert resp.status == 413
    assert (await upload(client, rid, "fits.zip", b"x" * LIMIT)).status == 201
    assert [e["type"] for e in await outbox(db)][len(events) :] == ["release.asset.uploaded"]
    assert len(stored_files(settings.storage_path)) == 2


async def test_chunked_upload_over_the_limit_is_413_while_streaming(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)

    async def body() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b"y" * (128 * 1024)  # 2.5 MiB in all, no Content-Length

    resp = await client.post(assets_url(rid, "big.zip"), data=body(), headers=auth("writer"))
    assert resp.status == 413
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE name = 'big.zip'") == 0
    assert len(stored_files(settings.storage_path)) == 1


async def test_upload_cut_off_mid_body_leaves_no_asset_and_no_file(
    client: Client, db: Any, settings: Settings
) -> None:
    """A client that disconnects half way: no row, no event, no file (also not in incoming/)."""
    rid = await new_release(client)
    events = await outbox(db)
    host, port = client.server.host, client.server.port
    assert isinstance(port, int)
    _reader, writer = await asyncio.open_connection(host, port)
    head = (
        f"POST {assets_url(rid, 'cut.zip')} HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: token writer-token\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Length: {LIMIT}\r\n\r\n"
    )
    writer.write(head.encode() + b"z" * (LIMIT // 2))
    await writer.drain()
    incoming = settings.storage_path / "incoming"

    for _ in range(500):  # until the server is receiving into its temporary file
        if incoming.exists() and any(incoming.iterdir()):
            break
        await asyncio.sleep(0.01)
    assert any(incoming.iterdir()), "the upload never started"
    writer.close()
    await writer.wait_closed()
    for _ in range(200):
        if not any(incoming.iterdir()):
            break
        await asyncio.sleep(0.01)
    assert list(incoming.iterdir()) == []
    assert len(stored_files(settings.storage_path)) == 1
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE name = 'cut.zip'") == 0
    assert await outbox(db) == events
    # the service is fine afterwards
    assert (await upload(client, rid, "cut.zip", b"whole")).status == 201


async def test_upload_to_unknown_or_deleted_release_is_404(client: Client) -> None:
    for path in ["999999", "abc", "0"]:
        resp = await client.post(
            f"{api('owner/pub')}/{path}/assets?name=a.zip", data=b"x", headers=auth("writer")
        )
        assert resp.status == 404
        assert (await resp.json())["error"]["code"] == "ReleaseNotFound"


async def test_upload_to_a_draft_then_publish_shows_it_to_the_update_check(
    client: Client,
) -> None:
    rid = await new_release(client, "v7.0.0", draft=True)
    assert (await upload(client, rid, "App-7.0.0-x64.zip", b"seven")).status == 201
    check = f"{api('owner/pub')}/update?version=1.0.0&platform=darwin&arch=x64"
    resp = await client.get(check)
    assert (await resp.json())["name"] == "v1.0.0" if resp.status == 200 else resp.status == 204
    patch = await client.patch(
        f"{api('owner/pub')}/{rid}", json={"draft": False}, headers=auth("writer")
    )
    assert patch.status == 200
    resp = await client.get(check)
    assert resp.status == 200
    update = await resp.json()
    assert update["name"] == "v7.0.0"
    assert update["url"].endswith("/releases/download/v7.0.0/App-7.0.0-x64.zip")
    assert update["platform"]["size"] == 5


async def test_delete_asset_204_event_and_file_gone(
    client: Client, db: Any, settings: Settings
) -> None:
    rid = await new_release(client)
    asset = await (await upload(client, rid, "gone.zip", b"bytes to delete")).json()
    shared = await (await upload(client, rid, "copy.zip", b"bytes to delete")).json()
    assert len(stored_files(settings.storage_path)) == 2
    resp = await client.delete(assets_url(rid) + f"/{asset['id']}", headers=auth("writer"))
    assert resp.status == 204
    event = (await outbox(db))[-1]
    assert event["type"] == "release.asset.deleted"
    assert (event["payload"]["asset_id"], event["payload"]["asset_name"]) == (
        asset["id"],
        "gone.zip",
    )
    assert len(stored_files(settings.storage_path)) == 2  # copy.zip has the same bytes
    resp = await client.delete(assets_url(rid) + f"/{shared['id']}", headers=auth("writer"))
    assert resp.status == 204
    assert len(stored_files(settings.storage_path)) == 1
    download = await client.get("/owner/pub/releases/download/v2.0.0/gone.zip")
    assert download.status == 404


async def test_delete_unknown_asset_is_404_and_emits_nothing(client: Client, db: Any) -> None:
    rid = await new_release(client)
    other_release = await new_release(client, "v3.0.0")
    asset = await (await upload(client, other_release, "a.zip", b"a")).json()
    events = await outbox(db)
    for path in [f"{rid}/assets/{asset['id']}", f"{rid}/assets/999999", f"{rid}/assets/x"]:
        resp = await client.delete(f"{api('owner/pub')}/{path}", headers=auth("writer"))
        assert resp.status == 404
        assert (await resp.json())["error"]["code"] == "AssetNotFound"
    assert await outbox(db) == events


async def test_storage_failure_is_503_and_leaves_nothing(
    client: Client, db: Any, settings: Settings
) -> None:
    """A disk that refuses the file: no asset, no event, no temporary file, and not a 500."""
    rid = await new_release(client)
    events = await outbox(db)
    sha_dir = settings.storage_path / "sha256"
    moved = settings.storage_path / "sha256.away"
    sha_dir.rename(moved)
    sha_dir.write_bytes(b"not a folder")  # moving the file into place fails
    try:
        resp = await upload(client, rid, "a.zip", b"bytes")
        assert resp.status == 503
        assert (await resp.json())["error"]["code"] == "ServiceUnavailable"
    finally:
        sha_dir.unlink()
        moved.rename(sha_dir)
    assert list((settings.storage_path / "incoming").iterdir()) == []
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE name = 'a.zip'") == 0
    assert await outbox(db) == events
    assert (await upload(client, rid, "a.zip", b"bytes")).status == 201


async def test_archived_repository_refuses_upload_before_reading_it(
    client: Client, db: Any
) -> None:
    rid = await new_release(client)
    await db.execute("UPDATE core.repositories SET archived = true WHERE name = 'pub'")
    resp = await upload(client, rid, "a.zip", b"bytes")
    assert resp.status == 403
    assert "archived" in (await resp.json())["error"]["message"]


async def test_stalled_upload_is_given_up_with_nothing_left(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    """A client that stops sending mid-body: 408 after the idle timeout, no file, no asset."""
    await load(publish_world())
    app = create_app(settings, Options(upload_idle_timeout=0.3))
    client: Client = await aiohttp_client(app)
    rid = await new_release(client)
    host, port = client.server.host, client.server.port
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        (
            f"POST {assets_url(rid, 'slow.zip')} HTTP/1.1\r\nHost: {host}\r\n"
            "Authorization: token writer-token\r\nContent-Length: 1000\r\n\r\n"
        ).encode()
        + b"s" * 10
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert b" 408 " in head
    assert list((settings.storage_path / "incoming").iterdir()) == []
    assert await db.fetchval("SELECT count(*) FROM releases.assets WHERE name = 'slow.zip'") == 0


async def test_database_error_while_recording_leaves_no_file(
    client: Client, db: Any, settings: Settings
) -> None:
    """The insert fails after the file was moved into place: the file is removed again."""
    rid = await new_release(client)
    events = await outbox(db)
    await db.execute(
        """CREATE FUNCTION releases.test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'disk on fire'; END $$;
           CREATE TRIGGER test_fail BEFORE INSERT ON releases.assets
               FOR EACH ROW WHEN (NEW.name = 'fail.zip') EXECUTE FUNCTION releases.test_fail();"""
    )
    resp = await upload(client, rid, "fail.zip", b"doomed bytes")
    assert resp.status == 500
    assert (await resp.json())["error"]["message"] == "Internal server error"  # no internals
    doomed = hashlib.sha256(b"doomed bytes").hexdigest()
    assert doomed not in {p.name for p in stored_files(settings.storage_path)}
    assert list((settings.storage_path / "incoming").iterdir()) == []
    assert await outbox(db) == events
    # identical bytes already referenced by another asset are kept
    assert (await upload(client, rid, "kept.zip", b"doomed bytes")).status == 201
    assert (await upload(client, rid, "fail.zip", b"doomed bytes")).status == 500
    assert doomed in {p.name for p in stored_files(settings.storage_path)}


async def test_multipart_file_part_without_its_closing_boundary_is_refused(
    client: Client, db: Any, settings: Settings
) -> None:
    """A form whose file part is not closed by the boundary may have been cut short: 400, and
    nothing is stored. Two file parts in one form: 422."""
    rid = await new_release(client)
    events = await outbox(db)
    part = b'--xyz\r\nContent-Disposition: form-data; name="a"; filename="a.zip"\r\n\r\nhello'
    second = b'\r\n--xyz\r\nContent-Disposition: form-data; name="b"; filename="b.zip"\r\n\r\nx'
    headers = {**auth("writer"), "Content-Type": "multipart/form-data; boundary=xyz"}
    for body, status in [
        (part, 400),
        (part + b"\r\n--xy", 400),
        (part + second + b"\r\n--xyz--\r\n", 422),
    ]:
        resp = await client.post(assets_url(rid), data=body, headers=headers)
        assert resp.status == status, body
    assert await outbox(db) == events
    assert len(stored_files(settings.storage_path)) == 1
    resp = await client.post(assets_url(rid), data=part + b"\r\n--xyz--\r\n", headers=headers)
    assert resp.status == 201 and (await resp.json())["size"] == 5


async def test_startup_sweeps_temporary_files_abandoned_by_a_crash(
    settings: Settings, aiohttp_client: Any
) -> None:
    """A process killed mid-upload cannot clean up; the next start deletes its old temporary
    file, but not a recent one (another replica may be receiving into it)."""
    incoming = settings.storage_path / "incoming"
    incoming.mkdir(parents=True)
    old, fresh = incoming / "upload-old", incoming / "upload-fresh"
    old.write_bytes(b"half an upload")
    fresh.write_bytes(b"in progress")
    os.utime(old, (time.time() - 2 * 3600, time.time() - 2 * 3600))
    await aiohttp_client(create_app(settings))
    # the sweep runs in the background, so the service starts without waiting for it
    await eventually(
        lambda: sorted(p.name for p in incoming.iterdir()) == ["upload-fresh"],
        what="the abandoned temporary file swept, the recent one kept",
    )


async def raw_upload_head(
    client: Client, path: str, token: str, length: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """Send only the head of an upload with `Expect: 100-continue`; the first line answered."""
    host, port = client.server.host, client.server.port
    assert isinstance(port, int)
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: token {token}\r\n"
            f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    return reader, writer, await asyncio.wait_for(reader.readline(), 10)


async def test_expect_continue_is_answered_only_after_the_checks(
    client: Client, settings: Settings
) -> None:
    """A refused upload is refused before its body is sent (curl and the forge CLI send
    `Expect: 100-continue`); an accepted one gets `100 Continue`, then its 201."""
    rid = await new_release(client)
    assert (await upload(client, rid, "taken.zip", b"t")).status == 201
    refused = [
        (assets_url(rid, "a.zip"), "wrong-token", 10, b" 401 "),
        (assets_url(rid, "a.zip"), "reader-token", 10, b" 403 "),
        (assets_url(999999, "a.zip"), "writer-token", 10, b" 404 "),
        (assets_url(rid, "a.zip"), "writer-token", LIMIT + 1, b" 413 "),
        (assets_url(rid, "taken.zip"), "writer-token", 10, b" 409 "),
        (assets_url(rid, "a%2Fb"), "writer-token", 10, b" 422 "),
    ]
    for path, token, length, status in refused:
        _, writer, first = await raw_upload_head(client, path, token, length)
        writer.close()
        assert status in first, (path, first)
    reader, writer, first = await raw_upload_head(
        client, assets_url(rid, "ok.zip"), "writer-token", 5
    )
    assert first == b"HTTP/1.1 100 Continue\r\n"
    assert await reader.readline() == b"\r\n"
    writer.write(b"hello")
    await writer.drain()
    final = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert b" 201 " in final
    assert len(stored_files(settings.storage_path)) == 3  # world, taken.zip, ok.zip
