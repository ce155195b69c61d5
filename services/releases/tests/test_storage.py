"""Asset storage: uploads streamed into S3 (multipart for large files) with digests,
a store that is down is 503 with Retry-After, the sweep of unreferenced blobs (never one an upload
in flight is about to reference), and `forge storage migrate` from a folder to S3.

The S3 is a real server (moto in server mode, or FORGE_TEST_S3_ENDPOINT: conftest.s3_server).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import io
from typing import Any

import pytest
from forge_common.cli import main
from forge_common.config import S3Settings, Settings
from forge_common.db import connect
from forge_common.keys import DB_POOL
from forge_releases.publish.queries import lock_blobs
from forge_releases.service import create_app
from forge_releases.storage import FolderStorage, S3Storage, Storage, open_storage
from forge_releases.storage.s3 import PART_SIZE, S3Location
from forge_releases.storage.sweep import sweep
from forge_testing.ports import free_port
from forge_testing.s3 import S3Server

from .publish_support import api, auth, publish_world

ONE = hashlib.sha256(b"one").hexdigest()  # the world's asset in every repository


def s3_settings(settings: Settings, s3: S3Server, **extra: Any) -> Settings:
    return dataclasses.replace(settings, storage_url=s3.url(), s3=s3.settings, **extra)


async def new_release(client: Any, tag: str = "v2.0.0") -> int:
    resp = await client.post(api("owner/pub"), json={"tag_name": tag}, headers=auth("writer"))
    assert resp.status == 201
    return int((await resp.json())["id"])


async def upload(client: Any, release_id: int, name: str, data: bytes) -> Any:
    return await client.post(
        f"{api('owner/pub')}/{release_id}/assets?name={name}",
        data=io.BytesIO(data),
        headers={**auth("writer"), "Content-Type": "application/octet-stream"},
    )


async def stored(storage: Storage) -> set[str]:
    return {digest async for digest in storage.digests()}


async def incoming_objects(storage: S3Storage) -> list[str]:
    client = await storage.client()
    loc = storage.location
    listed = await client.list_objects_v2(Bucket=loc.bucket, Prefix=loc.key("incoming/"))
    uploads = await client.list_multipart_uploads(Bucket=loc.bucket, Prefix=loc.key("incoming/"))
    return [o["Key"] for o in listed.get("Contents", [])] + [
        u["Key"] for u in uploads.get("Uploads", [])
    ]


async def test_uploads_stream_into_s3_with_their_digests(
    settings: Settings, s3_server: S3Server, load: Any, aiohttp_client: Any
) -> None:
    """A small file is put at its address; one of several parts goes through a multipart
    upload that is completed, copied to its address and removed from `incoming/`."""
    settings = s3_settings(settings, s3_server, storage_redirect=False)
    await load(publish_world())
    client = await aiohttp_client(create_app(settings))
    rid = await new_release(client)
    small = b"small file"
    large = bytes(range(256)) * (PART_SIZE * 2 // 256 + 1000)  # three parts
    for name, data in [("small.bin", small), ("large.bin", large)]:
        resp = await upload(client, rid, name, data)
        assert resp.status == 201, await resp.text()
        assert (await resp.json())["sha256"] == hashlib.sha256(data).hexdigest()
        download = await client.get(f"/owner/pub/releases/download/v2.0.0/{name}")
        assert download.status == 200 and await download.read() == data
    storage = open_storage(settings)
    assert isinstance(storage, S3Storage)
    try:
        assert await stored(storage) == {  # (the world's file was loaded into the folder)
            hashlib.sha256(small).hexdigest(),
            hashlib.sha256(large).hexdigest(),
        }
        await asyncio.sleep(0.2)  # the temporary object is deleted in the background
        assert await incoming_objects(storage) == []
    finally:
        await storage.close()


async def test_storage_down_is_503_with_retry_after(
    settings: Settings, s3_server: S3Server, load: Any, aiohttp_client: Any
) -> None:
    """Downloads (streamed) and uploads while the store refuses connections; HEAD and 304 need
    no store and still answer."""
    live = s3_settings(settings, s3_server, storage_redirect=False)
    await load(publish_world())
    dead = dataclasses.replace(
        live,
        s3=S3Settings(
            endpoint_url=f"http://127.0.0.1:{free_port()}",
            region="us-east-1",
            access_key_id="x",
            secret_access_key="x",
        ),
    )
    client = await aiohttp_client(create_app(dead))
    url = "/owner/pub/releases/download/v1.0.0/App-1.0.0-x64.zip"
    resp = await client.get(url)
    assert resp.status == 503
    assert resp.headers["Retry-After"].isdigit()
    assert (await resp.json())["error"]["code"] == "ServiceUnavailable"
    assert (await client.head(url)).status == 200
    assert (await client.get(url, headers={"If-None-Match": f'"{ONE}"'})).status == 304
    rid = await new_release(client)
    resp = await upload(client, rid, "App.zip", b"bytes")
    assert resp.status == 503 and "Retry-After" in resp.headers


async def test_sweep_deletes_only_unreferenced_blobs(
    settings: Settings, load: Any, aiohttp_client: Any
) -> None:
    await load(publish_world())
    client = await aiohttp_client(create_app(settings))
    storage = FolderStorage(settings.storage_path)
    orphan = await storage.writer()
    await orphan.write(b"left behind by a crash")
    orphan_blob = await orphan.commit()
    rid = await new_release(client)
    assert (await upload(client, rid, "kept.bin", b"kept")).status == 201
    kept = hashlib.sha256(b"kept").hexdigest()
    report = await sweep(storage, client.app[DB_POOL], batch=2)
    assert (report.checked, report.deleted) == (3, 1)
    assert await stored(storage) == {ONE, kept}
    assert orphan_blob.sha256 not in await stored(storage)
    download = await client.get("/owner/pub/releases/download/v2.0.0/kept.bin")
    assert await download.read() == b"kept"


async def test_sweep_waits_for_an_upload_about_to_reference_its_blob(
    settings: Settings, load: Any, aiohttp_client: Any
) -> None:
    """An upload holds the blob lock from the moment its blob reaches its address until its row
    is committed (publish/writes.attach_asset): a sweep meanwhile waits, then keeps the blob."""
    await load(publish_world())
    client = await aiohttp_client(create_app(settings))
    storage = FolderStorage(settings.storage_path)
    rid = await new_release(client)
    conn = await connect(settings.database_url)
    try:
        async with conn.transaction():
            await lock_blobs(conn)
            writer = await storage.writer()
            await writer.write(b"in flight")
            blob = await writer.commit()  # at its address, no row yet
            sweeping = asyncio.create_task(sweep(storage, client.app[DB_POOL]))
            await asyncio.sleep(0.3)
            assert not sweeping.done()  # waiting for the lock
            await conn.execute(
                "INSERT INTO releases.assets (release_id, name, size, content_type, sha1,"
                " sha256, sha512, uploader_id)"
                " SELECT $1, 'flight.bin', $2, 'application/octet-stream', $3, $4, $5, uploader_id"
                " FROM releases.assets LIMIT 1",
                rid,
                blob.size,
                blob.sha1,
                blob.sha256,
                blob.sha512,
            )
        report = await asyncio.wait_for(sweeping, 10)
    finally:
        await conn.close()
    assert report.deleted == 0
    assert blob.sha256 in await stored(storage)


async def forge(argv: list[str], env: dict[str, str], capsys: Any) -> tuple[int, str]:
    status = await asyncio.to_thread(main, argv, env)
    return status, capsys.readouterr().out


def s3_env(settings: Settings, s3: S3Server) -> dict[str, str]:
    s = s3.settings
    assert s.endpoint_url and s.region and s.access_key_id and s.secret_access_key
    return {
        "DATABASE_URL": settings.database_url,
        "STORAGE_PATH": str(settings.storage_path),
        "AWS_ENDPOINT_URL": s.endpoint_url,
        "AWS_REGION": s.region,
        "AWS_ACCESS_KEY_ID": s.access_key_id,
        "AWS_SECRET_ACCESS_KEY": s.secret_access_key,
        "LOG_LEVEL": "ERROR",
    }


async def test_migrate_copies_every_blob_verified_and_resumable(
    settings: Settings, s3_server: S3Server, load: Any, aiohttp_client: Any, capsys: Any
) -> None:
    world = publish_world()
    world["repos"][0]["releases"][0]["assets"].append({"name": "big.bin", "size": 3_000_000})
    await load(world)
    folder = FolderStorage(settings.storage_path)
    digests = await stored(folder)
    corrupt = await folder.writer()
    await corrupt.write(b"will be damaged")
    damaged = (await corrupt.commit()).sha256
    folder.path_of(damaged).write_bytes(b"damaged on disk")
    target = s3_server.url()
    env = s3_env(settings, s3_server)

    status, out = await forge(["storage", "migrate", "--to", target], env, capsys)
    assert status == 1  # one blob does not match its address
    assert f"{len(digests)} blob(s) copied" in out and "1 not matching" in out
    status, out = await forge(["storage", "migrate", "--to", target], env, capsys)
    assert f"0 blob(s) copied (0 B), {len(digests)} already at" in out

    moved = dataclasses.replace(settings, storage_url=target, s3=s3_server.settings)
    s3 = open_storage(moved)
    try:
        assert await stored(s3) == digests  # not the damaged one
    finally:
        await s3.close()
    client = await aiohttp_client(create_app(moved))
    resp = await client.get("/owner/pub/releases/download/v1.0.0/big.bin")
    assert resp.status == 200 and len(await resp.read()) == 3_000_000


async def test_migrate_from_the_wrong_source_counts_the_referenced_blobs_missing(
    settings: Settings, s3_server: S3Server, load: Any, capsys: Any, tmp_path: Any
) -> None:
    """The assets' blobs are in `settings.storage_path`; a migrate from another (empty) folder
    copies nothing, and says so: every referenced blob counted missing, exit status 1."""
    await load(publish_world())
    referenced = await stored(FolderStorage(settings.storage_path))
    assert referenced
    env = {**s3_env(settings, s3_server), "STORAGE_PATH": str(tmp_path / "wrong-folder")}
    target = s3_server.url()
    status, out = await forge(["storage", "migrate", "--to", target], env, capsys)
    assert status == 1
    assert "0 blob(s) copied (0 B), 0 already at" in out
    assert f"{len(referenced)} referenced by an asset but in neither store" in out
    # once copied from the right folder, nothing is missing
    env["STORAGE_PATH"] = str(settings.storage_path)
    status, out = await forge(["storage", "migrate", "--to", target], env, capsys)
    assert status == 0 and "0 referenced by an asset but in neither store" in out
    env["STORAGE_PATH"] = str(tmp_path / "wrong-folder")  # now at the target: not missing
    status, out = await forge(["storage", "migrate", "--to", target], env, capsys)
    assert status == 0, out


@pytest.mark.parametrize("url", ["ftp://x/y", "s3:///nobucket", "file://host/path"])
async def test_storage_url_must_name_a_backend(url: str, capsys: Any) -> None:
    env = {"DATABASE_URL": "postgresql://127.0.0.1:1/x", "STORAGE_URL": url}
    status = await asyncio.to_thread(main, ["storage", "sweep"], env)
    assert status == 1
    assert "STORAGE_URL" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("region", "endpoint"),
    [("us-east-1", None), ("eu-west-1", None), ("us-east-1", "http://127.0.0.1:9000")],
)
async def test_presigned_urls_use_signature_version_4(region: str, endpoint: str | None) -> None:
    """botocore presigns with the deprecated Version 2 in us-east-1 unless told otherwise
    (docs/storage.md "Presigned URLs"); signing needs no network."""
    storage = S3Storage(
        S3Location(
            bucket="assets",
            endpoint_url=endpoint,
            region=region,
            access_key_id="AKIDEXAMPLE",
            secret_access_key="not-a-real-secret",
        )
    )
    try:
        url = await storage.presigned_url(
            ONE, expires=60, disposition="attachment", content_type="application/octet-stream"
        )
    finally:
        await storage.close()
    assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url
    assert f"%2F{region}%2Fs3%2Faws4_request" in url
    assert "AWSAccessKeyId=" not in url and "&Signature=" not in url
