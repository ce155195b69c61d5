"""Sending a download's bytes: the same answer in every storage backend and deployment mode
(docs/storage.md "Serving"). The caller (files.py) has authorised the request and settled the
headers, the conditional requests and the ranges.

    HEAD                          headers only, from the database (no storage request)
    several ranges                206 multipart/byteranges, read from storage by the service
    folder, STORAGE_ACCEL_PREFIX  X-Accel-Redirect, no body: nginx sends the file (sendfile)
    folder, direct                the kernel's sendfile on the connection (zerocopy.py)
    S3, STORAGE_REDIRECT on       302 to a presigned URL valid a few minutes; the client re-sends
                                  its Range there
    S3, STORAGE_REDIRECT off      streamed from S3 through the service
    a body made by the service    sent from memory (a `.zsync` with its URLs made absolute:
                                  zsync_control.py), in every mode

A hand-off (X-Accel-Redirect, 302) happens only when the proxy or the store would pick the same
bytes as we did: no Range, or one range without If-Range. Anything else is sent by the service.

Counting (`count`): a full GET is counted once, when its bytes are complete where the service sends
them, when it is handed off otherwise; ranges, HEAD and 304 are never counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass

from aiohttp import web
from forge_common.keys import SETTINGS
from forge_common.middleware import stamp_headers
from forge_common.outage import dependency

from ..errors import AssetNotFound
from ..keys import DOWNLOAD_COUNTER, INSIGHTS, RELEASE_CACHE, STORAGE
from ..models import Asset
from ..storage import BlobMissing, FolderStorage, Storage, StorageUnavailable
from ..storage.base import STORAGE_DEPENDENCY, blob_key
from . import zerocopy
from .ranges import ByteRange

log = logging.getLogger(__name__)

# Cached redirects would outlive their presigned URL.
_REDIRECT_HEADERS = {"Cache-Control": "private, no-store"}


@dataclass(frozen=True, slots=True)
class Download:
    asset: Asset
    headers: Mapping[str, str]  # ETag, Last-Modified, Content-Type, Content-Disposition, caching
    ranges: list[ByteRange] | None  # None: the whole file
    repo_id: int
    # bytes the service made in place of the stored ones (`asset.size` is their length): sent from
    # memory, never handed off to nginx or the store
    body: bytes | None = None


# what reads a download's bytes [start, end): the store, or the body the service made
Reader = Callable[[int, int], AsyncIterator[bytes]]


def count(request: web.Request, download: Download) -> None:
    """One full download (the one place downloads are counted); the repository's cached list
    pages show counts, so they are dropped."""
    request.app[DOWNLOAD_COUNTER].add(download.asset.id)
    request.app[INSIGHTS].downloaded(
        download.repo_id, download.asset.release_id, download.asset.name
    )
    request.app[RELEASE_CACHE].downloaded(download.repo_id)


def sent(request: web.Request, size: int, *, zero_copy: bool = False) -> None:
    """Bytes of an asset sent, or handed to nginx or the store to send (forge_download_bytes);
    `zero_copy`: sent by the kernel from the file (forge_download_zero_copy_bytes)."""
    request.app[DOWNLOAD_COUNTER].sent(size, zero_copy=zero_copy)


async def send(request: web.Request, download: Download) -> web.StreamResponse:
    storage = request.app[STORAGE]
    ranges = download.ranges
    with storage_answers(request, download.asset):
        if request.method == "HEAD":
            return await _headers_only(request, download)
        read = _reader(storage, download)
        if ranges is not None and len(ranges) > 1:
            return await _multipart(request, read, download, ranges)
        part = ranges[0] if ranges else ByteRange(0, download.asset.size)
        if download.body is not None:
            return await _stream(request, read, download, part)
        handoff = _handoff_allowed(request, ranges)
        if isinstance(storage, FolderStorage):
            accel = request.app[SETTINGS].storage_accel_prefix
            if accel and handoff:
                return _accel_redirect(request, accel, download)
            return await _sendfile(request, storage, download, part)
        redirect = request.app[SETTINGS].storage_redirect and not _keeps_redirects(request)
        if storage.presigns and redirect and handoff:
            return await _presigned_redirect(request, storage, download)
        return await _stream(request, read, download, part)


@contextlib.contextmanager
def storage_answers(request: web.Request, asset: Asset) -> Iterator[None]:
    """What a failure of the store while reading `asset` answers: 503 with Retry-After when it is
    down, 404 (and an error in the log) when the blob is missing."""
    try:
        yield
    except StorageUnavailable as exc:
        raise dependency(request.app, STORAGE_DEPENDENCY).failed(
            exc, "The file cannot be read right now; try again later"
        ) from exc
    except ConnectionError:
        # the client went away mid-answer: what aiohttp does when it sees that first (cancel
        # the handler), rather than an error with a traceback in the log
        raise asyncio.CancelledError() from None
    except BlobMissing:
        url = request.app[STORAGE].url
        log.error("asset %s (%s) is missing from storage %s", asset.id, asset.name, url)
        raise AssetNotFound() from None


def _reader(storage: Storage, download: Download) -> Reader:
    body = download.body
    if body is None:
        sha256 = download.asset.sha256
        return lambda start, end: storage.read(sha256, start, end)

    async def from_memory(start: int, end: int) -> AsyncIterator[bytes]:
        yield body[start:end]

    return from_memory


def _keeps_redirects(request: web.Request) -> bool:
    """zsync keeps a redirected address for the rest of its transfer, so after one range sent by
    the store its later multi-range requests would go there, and the store answers those with the
    whole file, which zsync refuses (docs/releases.md "AppImage updates")."""
    return request.headers.get("User-Agent", "").startswith("zsync/")


def _handoff_allowed(request: web.Request, ranges: list[ByteRange] | None) -> bool:
    """Whether nginx or S3, reading the request's own headers, would send what we chose."""
    header = request.headers.get("Range")
    if header is None:
        return True
    return ranges is not None and "," not in header and "If-Range" not in request.headers


def _response(request: web.Request, status: int, download: Download) -> web.StreamResponse:
    response = web.StreamResponse(status=status, headers=download.headers)
    stamp_headers(request, response)
    return response


def _single(request: web.Request, download: Download, part: ByteRange) -> web.StreamResponse:
    """The 200 or 206 of one part, headers set, not prepared."""
    partial = download.ranges is not None
    response = _response(request, 206 if partial else 200, download)
    response.content_length = part.length
    if partial:
        response.headers["Content-Range"] = part.content_range(download.asset.size)
    return response


async def _headers_only(request: web.Request, download: Download) -> web.StreamResponse:
    ranges = download.ranges
    if ranges is not None and len(ranges) > 1:
        response = _response(request, 206, download)
        boundary = _boundary()
        response.headers["Content-Type"] = f"multipart/byteranges; boundary={boundary}"
        response.content_length = _multipart_length(download, ranges, boundary)
    else:
        part = ranges[0] if ranges else ByteRange(0, download.asset.size)
        response = _single(request, download, part)
    await response.prepare(request)
    await response.write_eof()
    return response


def _accel_redirect(request: web.Request, prefix: str, download: Download) -> web.StreamResponse:
    """nginx sends the file from its internal location (deploy/nginx/forge.conf.template); it
    applies the Range header itself, which _handoff_allowed has checked it reads as we do."""
    response = web.Response(status=200, headers=download.headers)
    response.headers["X-Accel-Redirect"] = prefix + blob_key(download.asset.sha256)
    sent(request, _handed_off(download))
    if download.ranges is None:
        count(request, download)
    return response


async def _presigned_redirect(
    request: web.Request, storage: Storage, download: Download
) -> web.StreamResponse:
    settings = request.app[SETTINGS]
    url = await storage.presigned_url(
        download.asset.sha256,
        expires=settings.storage_presign_seconds,
        disposition=download.headers["Content-Disposition"],
        content_type=download.headers["Content-Type"],
    )
    sent(request, _handed_off(download))
    if download.ranges is None:
        count(request, download)
    response = web.Response(status=302, headers={**download.headers, **_REDIRECT_HEADERS})
    response.headers["Location"] = url
    return response


def _handed_off(download: Download) -> int:
    """The bytes nginx or the store will send for us: the ranges asked, or the whole file."""
    if download.ranges is None:
        return download.asset.size
    return sum(part.length for part in download.ranges)


async def _sendfile(
    request: web.Request, storage: FolderStorage, download: Download, part: ByteRange
) -> web.StreamResponse:
    path = storage.path_of(download.asset.sha256)
    try:
        # opened on the loop: quick, and nothing is left open if the request is cancelled
        file = path.open("rb")
    except FileNotFoundError:
        raise BlobMissing(str(path)) from None
    except OSError as exc:
        raise StorageUnavailable(str(exc)) from exc
    try:
        if os.fstat(file.fileno()).st_size < part.end:
            raise BlobMissing(f"{path} is shorter than recorded")
        response = _single(request, download, part)
        await response.prepare(request)  # a StreamResponse sends its headers at once
        try:
            zero_copy = await zerocopy.send_file(
                request.transport,
                file,
                part.start,
                part.length,
                lambda n: sent(request, n, zero_copy=True),
            )
        except ConnectionError:
            raise
        except (EOFError, OSError) as exc:
            return _cut_short(request, response, exc)
        if not zero_copy:  # TLS, no socket, bytes queued: read and written by Python
            chunks = storage.read(download.asset.sha256, part.start, part.end)
            if not await _write_all(request, response, b"", chunks):
                return response
        await response.write_eof()
        if download.ranges is None:
            count(request, download)
    finally:
        file.close()
    return response


async def _stream(
    request: web.Request, read: Reader, download: Download, part: ByteRange
) -> web.StreamResponse:
    chunks = read(part.start, part.end)
    first = await _first(chunks)  # a missing blob or a store that is down fails before the 200
    response = _single(request, download, part)
    await response.prepare(request)
    if await _write_all(request, response, first, chunks):
        await response.write_eof()
        if download.ranges is None:
            count(request, download)
    return response


async def _first(chunks: AsyncIterator[bytes]) -> bytes:
    try:
        return await anext(chunks)
    except StopAsyncIteration:
        return b""


async def _write_all(
    request: web.Request, response: web.StreamResponse, first: bytes, chunks: AsyncIterator[bytes]
) -> bool:
    """Write what is left; False when the store failed mid-way (`_cut_short`)."""
    try:
        if first:
            await response.write(first)
            sent(request, len(first))
        async for chunk in chunks:
            await response.write(chunk)
            sent(request, len(chunk))
    except (BlobMissing, StorageUnavailable) as exc:
        _cut_short(request, response, exc)
        return False
    return True


def _cut_short(
    request: web.Request, response: web.StreamResponse, exc: Exception
) -> web.StreamResponse:
    """The storage failed once the status line was out: the connection is closed, and the client
    sees a body shorter than Content-Length."""
    log.error("download cut short: %s", exc)
    if request.transport is not None:
        request.transport.close()
    return response


def _boundary() -> str:
    return os.urandom(12).hex()


def _part_header(download: Download, part: ByteRange, boundary: str) -> bytes:
    # Every boundary, the first included, is preceded by CRLF, as nginx and Apache write it:
    # zsync discards one line before each boundary it expects (docs/releases.md "Ranges").
    return (
        f"\r\n--{boundary}\r\n"
        f"Content-Type: {download.headers['Content-Type']}\r\n"
        f"Content-Range: {part.content_range(download.asset.size)}\r\n\r\n"
    ).encode()


def _closing(boundary: str) -> bytes:
    return f"\r\n--{boundary}--\r\n".encode()


def _multipart_length(download: Download, ranges: list[ByteRange], boundary: str) -> int:
    return sum(len(_part_header(download, part, boundary)) + part.length for part in ranges) + len(
        _closing(boundary)
    )


async def _multipart(
    request: web.Request, read: Reader, download: Download, ranges: list[ByteRange]
) -> web.StreamResponse:
    """206 multipart/byteranges (RFC 9110 §14.6): the parts in the order asked, each with its
    Content-Type and Content-Range; the body starts with CRLF and the first boundary, as nginx
    sends it, which zsync needs and electron-updater's DataSplitter accepts."""
    boundary = _boundary()
    first_chunks = read(ranges[0].start, ranges[0].end)
    first = await _first(first_chunks)  # fails before the 206 when the blob is gone
    response = _response(request, 206, download)
    response.headers["Content-Type"] = f"multipart/byteranges; boundary={boundary}"
    response.content_length = _multipart_length(download, ranges, boundary)
    await response.prepare(request)
    for i, part in enumerate(ranges):
        await response.write(_part_header(download, part, boundary))
        if i == 0:
            chunks, lead = first_chunks, first
        else:
            chunks, lead = read(part.start, part.end), b""
        if not await _write_all(request, response, lead, chunks):
            return response
    await response.write(_closing(boundary))
    await response.write_eof()
    return response
