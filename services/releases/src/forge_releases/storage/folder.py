"""Blobs in a local folder (`STORAGE_URL=file:///path`, or `STORAGE_PATH`): `sha256/ab/cd/<digest>`.

Bytes are written to a temporary file under `incoming/` in the same file system while being hashed,
then renamed into place, so a reader never sees a partial file and a cut-off upload leaves nothing
behind. Identical files uploaded twice are stored once. File work runs in a thread (`to_thread`) so
the event loop keeps serving during a large write.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from .base import READ_CHUNK, Blob, BlobMissing, BlobWriter, Storage, blob_key


class FolderStorage(Storage):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = root.resolve().as_uri()

    def path_of(self, sha256: str) -> Path:
        return self.root / blob_key(sha256)

    async def writer(self) -> FolderWriter:
        return await asyncio.to_thread(FolderWriter, self)

    async def exists(self, sha256: str) -> bool:
        return await asyncio.to_thread(self.path_of(sha256).is_file)

    async def size(self, sha256: str) -> int:
        try:
            return (await asyncio.to_thread(self.path_of(sha256).stat)).st_size
        except FileNotFoundError:
            raise BlobMissing(sha256) from None

    async def read(self, sha256: str, start: int, end: int) -> AsyncIterator[bytes]:
        try:
            # opened and closed on the loop: quick, and no file is left open if the request is
            # cancelled mid-way (reads, which can be slow, go to a thread)
            file = self.path_of(sha256).open("rb")
        except FileNotFoundError:
            raise BlobMissing(sha256) from None
        with file:
            if start:
                await asyncio.to_thread(file.seek, start)
            remaining = end - start
            while remaining > 0:
                chunk = await asyncio.to_thread(file.read, min(READ_CHUNK, remaining))
                if not chunk:  # shorter than recorded: stop; the client sees a short body
                    raise BlobMissing(f"{sha256} ended {remaining} bytes early")
                remaining -= len(chunk)
                yield chunk

    async def digests(self) -> AsyncIterator[str]:
        paths = await asyncio.to_thread(lambda: sorted((self.root / "sha256").glob("*/*/*")))
        for path in paths:
            yield path.name

    async def delete(self, sha256: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(self.path_of(sha256).unlink)

    async def sweep_incoming(self, older_than: float) -> int:
        return await asyncio.to_thread(self._sweep_incoming, older_than)

    def _sweep_incoming(self, older_than: float) -> int:
        incoming = self.root / "incoming"
        if not incoming.is_dir():
            return 0
        deadline = time.time() - older_than
        deleted = 0
        for path in incoming.glob("upload-*"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < deadline:
                    path.unlink()
                    deleted += 1
        return deleted


class FolderWriter(BlobWriter):
    def __init__(self, storage: FolderStorage) -> None:
        super().__init__()
        self.storage = storage
        incoming = storage.root / "incoming"
        incoming.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=incoming, prefix="upload-")
        # readable by nginx (another user) when it sends the file (X-Accel-Redirect)
        os.fchmod(fd, 0o644)
        self._file = os.fdopen(fd, "wb")
        self._temp = Path(name)

    async def write(self, chunk: bytes) -> None:
        await asyncio.to_thread(self.write_now, chunk)

    def write_now(self, chunk: bytes) -> None:
        """`write` without a thread hop, for callers already in a thread (world loading)."""
        self._file.write(chunk)
        self.hashes.update(chunk)

    async def commit(self) -> Blob:
        return await asyncio.to_thread(self._commit)

    def _commit(self) -> Blob:
        self._file.close()
        blob = self.hashes.blob()
        target = self.storage.path_of(blob.sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self._temp, target)
        return blob

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self._temp.unlink()
