"""Blobs in an S3-compatible bucket (`STORAGE_URL=s3://bucket/prefix`): AWS S3, MinIO, R2, Ceph.

The client is aiobotocore: botocore's own signing, retries, credential chain (variables, profile,
instance role) and presigning, on the aiohttp event loop the service already runs (docs/storage.md
"Why aiobotocore").

Writing: the address (the SHA-256) is known only at the end, so bytes are held in memory up to
one part (PART_SIZE, 5 MiB). A blob that fits in one part is put at its address in `commit()`; a
larger one goes, part by part, into a multipart upload at `incoming/upload-<uuid>`, which `commit()`
completes and copies to its address (a server-side copy: the bytes do not come back). Peak memory
per upload is about one part (one buffer, sent without a copy), whatever the file size.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import io
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

import aiohttp
from aiobotocore.config import AioConfig
from aiobotocore.session import AioSession, get_session
from botocore.exceptions import BotoCoreError, ClientError

from .base import (
    READ_CHUNK,
    Blob,
    BlobMissing,
    BlobWriter,
    Storage,
    StorageUnavailable,
    blob_key,
)

if TYPE_CHECKING:
    from types_aiobotocore_s3 import S3Client

log = logging.getLogger(__name__)
T = TypeVar("T")

# S3's smallest part (all but the last): the least memory per upload; a 4 GiB upload is 820 parts
# of the 10,000 S3 allows.
PART_SIZE = 5 * 1024 * 1024
_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}


@dataclass(frozen=True, slots=True)
class S3Location:
    """Where the store is and how to reach it; None fields are left to botocore's defaults."""

    bucket: str
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"


@functools.cache
def _session() -> AioSession:
    """One botocore session per process: it caches the S3 model it loads (about a second of CPU),
    so each further client costs little."""
    return get_session()


async def _call(operation: Awaitable[T]) -> T:
    """An S3 request; a missing object is BlobMissing, any other failure StorageUnavailable."""
    try:
        return await operation
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _MISSING_CODES:
            raise BlobMissing(code) from exc
        raise StorageUnavailable(f"S3 error {code}") from exc
    except (BotoCoreError, aiohttp.ClientError, TimeoutError) as exc:
        raise StorageUnavailable(f"S3 unreachable: {type(exc).__name__}") from exc


class S3Storage(Storage):
    presigns = True

    def __init__(self, location: S3Location) -> None:
        self.location = location
        self.url = f"s3://{location.bucket}/{location.prefix}"
        self._stack = AsyncExitStack()
        self._client: S3Client | None = None
        self._background: set[asyncio.Task[None]] = set()

    async def client(self) -> S3Client:
        """One client (one connection pool) per storage, created on first use."""
        if self._client is None:
            loc = self.location
            config = AioConfig(
                # Signature Version 4 for every request and presigned URL: botocore's presigning
                # default in us-east-1 is still the deprecated Version 2 (docs/storage.md)
                signature_version="s3v4",
                # path-style addressing for endpoints other than AWS (MinIO, moto, Ceph)
                s3={"addressing_style": "path"} if loc.endpoint_url else None,
                # checksums only where S3 requires them: older S3-compatible stores refuse
                # the newer default trailers
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
                # one retry: a store that is down answers 503 within seconds, not tens
                retries={"max_attempts": 2, "mode": "standard"},
                connect_timeout=5,
                read_timeout=60,
                max_pool_connections=64,
            )
            self._client = await self._stack.enter_async_context(
                _session().create_client(
                    "s3",
                    endpoint_url=loc.endpoint_url,
                    region_name=loc.region,
                    aws_access_key_id=loc.access_key_id,
                    aws_secret_access_key=loc.secret_access_key,
                    aws_session_token=loc.session_token,
                    config=config,
                )
            )
        return self._client

    def key_of(self, sha256: str) -> str:
        return self.location.key(blob_key(sha256))

    async def writer(self) -> S3Writer:
        return S3Writer(self, await self.client())

    async def exists(self, sha256: str) -> bool:
        try:
            await self.size(sha256)
        except BlobMissing:
            return False
        return True

    async def size(self, sha256: str) -> int:
        client = await self.client()
        head = await _call(client.head_object(Bucket=self.location.bucket, Key=self.key_of(sha256)))
        return int(head["ContentLength"])

    async def read(self, sha256: str, start: int, end: int) -> AsyncIterator[bytes]:
        if end <= start:
            return
        client = await self.client()
        response = await _call(
            client.get_object(
                Bucket=self.location.bucket,
                Key=self.key_of(sha256),
                Range=f"bytes={start}-{end - 1}",
            )
        )
        async with response["Body"] as body:
            remaining = end - start
            while remaining > 0:
                chunk = await _call(body.read(min(READ_CHUNK, remaining)))
                if not chunk:
                    raise BlobMissing(f"{sha256} ended {remaining} bytes early")
                remaining -= len(chunk)
                yield chunk

    async def presigned_url(
        self, sha256: str, *, expires: int, disposition: str, content_type: str
    ) -> str:
        """A GET URL for the blob that S3 honours for `expires` seconds, answering with our
        Content-Disposition and Content-Type."""
        client = await self.client()
        url: str = await client.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.location.bucket,
                "Key": self.key_of(sha256),
                "ResponseContentDisposition": disposition,
                "ResponseContentType": content_type,
            },
            ExpiresIn=expires,
        )
        return url

    async def _list(self, prefix: str) -> AsyncIterator[dict[str, Any]]:
        client = await self.client()
        paginator = client.get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self.location.bucket, Prefix=self.location.key(prefix))
        try:
            async for page in pages:
                for item in page.get("Contents", []):
                    yield dict(item)
        except (ClientError, BotoCoreError, aiohttp.ClientError) as exc:
            raise StorageUnavailable(f"S3 listing failed: {type(exc).__name__}") from exc

    async def digests(self) -> AsyncIterator[str]:
        async for item in self._list("sha256/"):
            yield str(item["Key"]).rsplit("/", 1)[-1]

    async def delete(self, sha256: str) -> None:
        client = await self.client()
        await _call(client.delete_object(Bucket=self.location.bucket, Key=self.key_of(sha256)))

    async def sweep_incoming(self, older_than: float) -> int:
        client = await self.client()
        bucket = self.location.bucket
        deadline = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=older_than)
        deleted = 0
        uploads = await _call(
            client.list_multipart_uploads(Bucket=bucket, Prefix=self.location.key("incoming/"))
        )
        for upload in uploads.get("Uploads", []):
            if upload["Initiated"] < deadline:
                await _call(
                    client.abort_multipart_upload(
                        Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                )
                deleted += 1
        async for item in self._list("incoming/"):
            if item["LastModified"] < deadline:
                await _call(client.delete_object(Bucket=bucket, Key=item["Key"]))
                deleted += 1
        return deleted

    async def check(self) -> None:
        client = await self.client()
        await _call(client.head_bucket(Bucket=self.location.bucket))

    def in_background(self, make: Callable[[], Awaitable[None]]) -> None:
        """Run cleanup that must not hold up (or be cancelled with) the caller."""

        async def run() -> None:
            with contextlib.suppress(Exception):
                await make()

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        if self._background:
            await asyncio.wait(set(self._background), timeout=5)
        await self._stack.aclose()
        self._client = None


class _PartReader(io.RawIOBase):
    """A read-only file over a buffer, without copying it: botocore reads a part body (and seeks
    back to sign or retry it) and aiohttp sends it from a file object, as it asks for large
    bodies (raw bytes would be one blocking write)."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        count = max(0, min(len(target), len(self._view) - self._pos))
        target[:count] = self._view[self._pos : self._pos + count]
        self._pos += count
        return count

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


class S3Writer(BlobWriter):
    def __init__(self, storage: S3Storage, client: S3Client) -> None:
        super().__init__()
        self.storage = storage
        self._client = client
        self._bucket = storage.location.bucket
        # one fixed buffer, reused for every part: growing a bytearray would reallocate (and
        # briefly hold) it several times per part
        self._buffer = bytearray(PART_SIZE)
        self._filled = 0
        self._temp_key = storage.location.key(f"incoming/upload-{uuid.uuid4().hex}")
        self._upload_id: str | None = None
        self._temp_written = False  # a completed multipart object waits at the temporary key
        self._parts: list[dict[str, Any]] = []

    async def write(self, chunk: bytes) -> None:
        self.hashes.update(chunk)
        view = memoryview(chunk)
        while view:
            taken = min(len(view), PART_SIZE - self._filled)
            self._buffer[self._filled : self._filled + taken] = view[:taken]
            self._filled += taken
            view = view[taken:]
            if self._filled == PART_SIZE:
                await self._send_part()

    def _take_pending(self) -> IO[bytes]:
        """The buffered bytes as a file, not a copy (the buffer is reused only once the part
        is sent)."""
        filled, self._filled = self._filled, 0
        return cast(IO[bytes], _PartReader(memoryview(self._buffer)[:filled]))

    async def _send_part(self) -> None:
        if self._upload_id is None:
            created = await _call(
                self._client.create_multipart_upload(Bucket=self._bucket, Key=self._temp_key)
            )
            self._upload_id = created["UploadId"]
        number = len(self._parts) + 1
        answer = await _call(
            self._client.upload_part(
                Bucket=self._bucket,
                Key=self._temp_key,
                UploadId=self._upload_id,
                PartNumber=number,
                Body=self._take_pending(),
            )
        )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    async def commit(self) -> Blob:
        blob = self.hashes.blob()
        key = self.storage.key_of(blob.sha256)
        if self._upload_id is None:  # small: straight to its address
            await _call(
                self._client.put_object(Bucket=self._bucket, Key=key, Body=self._take_pending())
            )
            return blob
        if self._filled:
            await self._send_part()
        await _call(
            self._client.complete_multipart_upload(
                Bucket=self._bucket,
                Key=self._temp_key,
                UploadId=self._upload_id,
                MultipartUpload={"Parts": self._parts},  # type: ignore[typeddict-item]
            )
        )
        self._upload_id = None
        self._temp_written = True
        try:
            if not await self.storage.exists(blob.sha256):
                await _call(
                    self._client.copy_object(
                        Bucket=self._bucket,
                        Key=key,
                        CopySource={"Bucket": self._bucket, "Key": self._temp_key},
                    )
                )
        finally:
            self.abort()  # the temporary object
        return blob

    def abort(self) -> None:
        self._filled = 0
        client, bucket, key, upload_id = self._client, self._bucket, self._temp_key, self._upload_id
        self._upload_id = None
        if upload_id is not None:

            async def abort_upload() -> None:
                await client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)

            self.storage.in_background(abort_upload)
        elif self._temp_written:
            self._temp_written = False

            async def delete_temp() -> None:
                await client.delete_object(Bucket=bucket, Key=key)

            self.storage.in_background(delete_temp)
