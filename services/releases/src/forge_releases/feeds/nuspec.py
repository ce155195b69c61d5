"""Reading a stored Velopack package's `.nuspec` (forge_common.nuspec says what it holds) without
fetching the package: zipfile, in a worker thread, reads the zip's directory and the `.nuspec`
through ranged reads of the storage, so a package of any size costs a few small reads. Read once
per asset, at upload (or the first time the Velopack feed needs it), and kept (feeds/queries.py).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Coroutine
from typing import Any

from forge_common.nuspec import NOT_VELOPACK, Package, read_package

from ..storage import Storage
from ..storage.base import BlobMissing, StorageUnavailable

__all__ = ["NOT_VELOPACK", "Package", "package_of"]

READ_TIMEOUT = 60.0  # seconds per ranged read of the storage

Read = Callable[[int, int], Coroutine[Any, Any, bytes]]


class _Stored(io.RawIOBase):
    """A stored blob as a seekable file, for zipfile in a worker thread: each read is a ranged
    read of the storage, run on the event loop."""

    def __init__(self, read: Read, size: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._read, self._size, self._loop, self._at = read, size, loop, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._size}[whence]
        self._at = max(0, base + offset)
        return self._at

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        end = min(self._size, self._at + len(buffer))
        if end <= self._at:
            return 0
        future = asyncio.run_coroutine_threadsafe(self._read(self._at, end), self._loop)
        data = future.result(READ_TIMEOUT)
        buffer[: len(data)] = data
        self._at += len(data)
        return len(data)


async def package_of(storage: Storage, sha256: str, size: int) -> Package | None:
    """The package stored under `sha256`; None when the blob is missing (nothing to keep)."""

    async def read(start: int, end: int) -> bytes:
        return b"".join([chunk async for chunk in storage.read(sha256, start, end)])

    loop = asyncio.get_running_loop()
    stored = io.BufferedReader(_Stored(read, size, loop), 64 * 1024)
    try:
        return await asyncio.to_thread(read_package, stored)
    except BlobMissing:
        return None
    except TimeoutError:  # a read that never came back: the storage is down (503), not the zip
        raise StorageUnavailable(f"reading blob {sha256} timed out") from None
