"""Content-addressed asset storage under STORAGE_PATH: a file's address is its SHA-256.

Bytes are written to a temporary file in the same folder while being hashed, then renamed into
place, so a reader never sees a partial file and a cut-off upload leaves nothing behind.
Identical files uploaded twice are stored once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Blob:
    size: int
    sha1: str
    sha256: str
    sha512: str


class Storage:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, sha256: str) -> Path:
        if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise ValueError("not a SHA-256 hex digest")
        return self.root / "sha256" / sha256[:2] / sha256[2:4] / sha256

    def writer(self) -> BlobWriter:
        return BlobWriter(self)

    def exists(self, sha256: str) -> bool:
        return self.path_of(sha256).is_file()


class BlobWriter:
    """`write()` chunks, then `commit()` (moves the file into place) or `abort()` (deletes it)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        incoming = storage.root / "incoming"
        incoming.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=incoming, prefix="upload-")
        self._file = os.fdopen(fd, "wb")
        self._temp = Path(name)
        self._sha1 = hashlib.sha1(usedforsecurity=False)
        self._sha256 = hashlib.sha256()
        self._sha512 = hashlib.sha512()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._sha1.update(chunk)
        self._sha256.update(chunk)
        self._sha512.update(chunk)
        self.size += len(chunk)

    def commit(self) -> Blob:
        self._file.close()
        blob = Blob(
            self.size, self._sha1.hexdigest(), self._sha256.hexdigest(), self._sha512.hexdigest()
        )
        target = self.storage.path_of(blob.sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self._temp, target)
        return blob

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self._temp.unlink()


def deterministic_bytes(name: str, size: int, chunk_size: int = 1 << 20) -> list[bytes]:
    """`size` bytes that depend only on `name` (world-file assets given by size), in chunks."""
    seed = hashlib.sha256(name.encode()).digest()
    block = (seed * (chunk_size // len(seed) + 1))[:chunk_size]
    chunks = [block] * (size // chunk_size)
    if size % chunk_size:
        chunks.append(block[: size % chunk_size])
    return chunks
