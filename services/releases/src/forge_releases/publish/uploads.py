"""Receiving an asset's bytes: the raw request body, or the one file part of a multipart form.

The body is read from `request.content` chunk by chunk (never `request.read()`, so the JSON body
limit does not apply and the file is never held in memory) and written to a storage.BlobWriter,
which hashes while writing. aiohttp stops reading the socket while its small buffer is full, so a
fast client cannot fill our memory. Chunks are handed to the writer about 1 MiB at a time (the
folder backend writes and hashes in a thread, the S3 backend sends a part every 5 MiB), so the
event loop keeps serving other requests during a large upload.

The size limit is checked against Content-Length before anything is read, and again while
streaming (chunked bodies, lying clients). Any failure aborts the writer: no stray file remains.
"""

from __future__ import annotations

import asyncio
import mimetypes
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from aiohttp import BodyPartReader, MultipartReader, web
from aiohttp.http_exceptions import BadHttpMessage

from ..errors import (
    AssetTooLarge,
    IncompleteFilePart,
    MalformedMultipart,
    NestedMultipart,
    NoFilePart,
    SeveralFileParts,
    UploadStalled,
)
from ..keys import OPTIONS
from ..storage import BlobWriter, Storage

READ_SIZE = 256 * 1024
WRITE_SIZE = 1024 * 1024
# Boundaries and part headers around the file in a multipart body.
MULTIPART_OVERHEAD = 64 * 1024

# What aiohttp's multipart reader raises for a malformed form (BadHttpMessage: a part header
# it cannot parse, such as one with a control character).
_MALFORMED = (ValueError, AssertionError, RuntimeError, BadHttpMessage)
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$")
# Declared types that say nothing about the file (curl --data-binary sends form-urlencoded).
_UNINFORMATIVE = {
    "application/octet-stream",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
}


async def _nothing_more() -> None:
    return None


@dataclass(frozen=True, slots=True)
class Upload:
    """An upload whose bytes have not been read yet."""

    filename: str | None  # from a multipart part; None for a raw body
    declared_type: str
    chunks: AsyncIterator[bytes]
    # after the last chunk: checks that the body ended properly (the closing multipart boundary)
    finish: Callable[[], Awaitable[None]] = _nothing_more


def content_type_of(declared: str, name: str) -> str:
    """The declared media type when it says something, else a guess from the file name."""
    media = declared.split(";", 1)[0].strip().lower()
    if _MEDIA_TYPE.match(media) and media not in _UNINFORMATIVE:
        return media
    return mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"


def check_declared_length(request: web.Request, limit: int) -> None:
    """413 before reading when Content-Length already says the body is over the limit."""
    length = request.content_length
    overhead = MULTIPART_OVERHEAD if request.content_type == "multipart/form-data" else 0
    if length is not None and length > limit + overhead:
        raise AssetTooLarge(limit)


def _idle_timeout(request: web.Request) -> float:
    """Seconds without data before an upload is given up on (Options.upload_idle_timeout)."""
    return request.app[OPTIONS].upload_idle_timeout


async def _raw_chunks(request: web.Request) -> AsyncIterator[bytes]:
    idle = _idle_timeout(request)
    while True:
        try:
            async with asyncio.timeout(idle):
                chunk = await request.content.read(READ_SIZE)
        except TimeoutError:
            raise UploadStalled(idle) from None
        if not chunk:
            return
        yield chunk


async def _part_chunks(part: BodyPartReader, idle: float) -> AsyncIterator[bytes]:
    while True:
        try:
            async with asyncio.timeout(idle):
                chunk = await part.read_chunk(READ_SIZE)
        except TimeoutError:
            raise UploadStalled(idle) from None
        except _MALFORMED:
            raise MalformedMultipart() from None
        if not chunk:
            return
        yield chunk


def _form_end(reader: MultipartReader) -> Callable[[], Awaitable[None]]:
    """aiohttp hands out a file part that lacks its closing boundary as if it were complete:
    the rest of the form must be read to know the file was not cut short."""

    async def finish() -> None:
        try:
            while (rest := await reader.next()) is not None:
                if isinstance(rest, MultipartReader) or rest.filename is not None:
                    raise SeveralFileParts()
                await rest.release()
        except _MALFORMED:
            raise IncompleteFilePart() from None

    return finish


# Fields before the file that a form-checking caller reads (the console's `_csrf`): a few short
# ones, so a form cannot make us hold more than this in memory before its file.
FIELDS_BEFORE_FILE = 8
FIELD_BYTES = 1024
FieldCheck = Callable[[dict[str, str]], Awaitable[None]]


async def _small_field(part: BodyPartReader) -> str:
    data = bytearray()
    while chunk := await part.read_chunk(FIELD_BYTES):
        data += chunk
        if len(data) > FIELD_BYTES:
            raise MalformedMultipart()
    return data.decode("utf-8", "replace")


async def open_upload(request: web.Request, check_fields: FieldCheck | None = None) -> Upload:
    """The bytes to store: the raw body, or the first file part of a multipart form (fields
    before it are skipped, or with `check_fields` read and handed to it before a byte of the
    file is; nothing after it is read)."""
    if request.content_type != "multipart/form-data":
        if check_fields is not None:
            await check_fields({})
        return Upload(None, request.headers.get("Content-Type", ""), _raw_chunks(request))
    fields: dict[str, str] = {}
    try:
        reader = await request.multipart()
        while True:
            part = await reader.next()
            if part is None:
                raise NoFilePart()
            if isinstance(part, MultipartReader):
                raise NestedMultipart()
            if part.filename is not None:
                if check_fields is not None:
                    await check_fields(fields)
                declared = part.headers.get("Content-Type", "")
                chunks = _part_chunks(part, _idle_timeout(request))
                return Upload(part.filename, declared, chunks, _form_end(reader))
            if check_fields is None:
                await part.release()  # a plain form field: skip it
            elif len(fields) >= FIELDS_BEFORE_FILE:
                raise MalformedMultipart()
            else:
                fields[part.name or ""] = await _small_field(part)
    except _MALFORMED:
        raise MalformedMultipart() from None


async def receive(upload: Upload, storage: Storage, limit: int) -> BlobWriter:
    """Stream the upload into a new blob writer (not committed). Raises PayloadTooLarge over
    `limit`; on any failure, including cancellation, the temporary file is deleted."""
    writer = await storage.writer()
    try:
        pending: list[bytes] = []
        pending_size = 0
        received = 0
        async for chunk in upload.chunks:
            received += len(chunk)
            if received > limit:
                raise AssetTooLarge(limit)
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size >= WRITE_SIZE:
                await writer.write(b"".join(pending))
                pending, pending_size = [], 0
        if pending:
            await writer.write(b"".join(pending))
        await upload.finish()
    except BaseException:
        writer.abort()  # synchronous: it must run even when the task is being cancelled
        raise
    return writer
