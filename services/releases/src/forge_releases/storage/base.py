"""What every storage backend offers: content-addressed blobs (a blob's address is its SHA-256),
written through a `BlobWriter` that hashes while it writes, read back by byte range, listed and
deleted (sweep.py, migrate.py).

A writer's bytes go to a temporary place first and reach their address only in `commit()`, so a
reader never sees a partial blob and an abandoned upload leaves nothing at an address.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass

# The name of the storage dependency in forge_common.outage (503 and its warnings when it is down).
STORAGE_DEPENDENCY = "storage"

# Blobs are read in pieces of this size when the service itself sends them.
READ_CHUNK = 256 * 1024


class StorageUnavailable(OSError):
    """The store could not be reached or refused the request (503 with Retry-After)."""


class BlobMissing(LookupError):
    """No blob at this address (a deleted or never-copied file)."""


@dataclass(frozen=True, slots=True)
class Blob:
    size: int
    sha1: str
    sha256: str
    sha512: str


def check_digest(sha256: str) -> str:
    if len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
        raise ValueError("not a SHA-256 hex digest")
    return sha256


def blob_key(sha256: str) -> str:
    """The address of a blob below a store's root, the same in every backend."""
    check_digest(sha256)
    return f"sha256/{sha256[:2]}/{sha256[2:4]}/{sha256}"


class Hashes:
    """SHA-1, SHA-256 and SHA-512 of everything given to `update`, and its size."""

    def __init__(self) -> None:
        self._sha1 = hashlib.sha1(usedforsecurity=False)
        self._sha256 = hashlib.sha256()
        self._sha512 = hashlib.sha512()
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self._sha1.update(chunk)
        self._sha256.update(chunk)
        self._sha512.update(chunk)
        self.size += len(chunk)

    def blob(self) -> Blob:
        return Blob(
            self.size, self._sha1.hexdigest(), self._sha256.hexdigest(), self._sha512.hexdigest()
        )


class BlobWriter(ABC):
    """`write()` chunks, then `commit()` (the blob reaches its address) or `abort()`."""

    def __init__(self) -> None:
        self.hashes = Hashes()

    @property
    def size(self) -> int:
        return self.hashes.size

    @abstractmethod
    async def write(self, chunk: bytes) -> None: ...

    @abstractmethod
    async def commit(self) -> Blob: ...

    @abstractmethod
    def abort(self) -> None:
        """Synchronous, so it runs even while the task is being cancelled; drops what was
        written (in the background where the store needs a request for it)."""


class Storage(ABC):
    """One backend: folder.FolderStorage or s3.S3Storage (open_storage() picks it)."""

    url: str
    # a store that hands out presigned URLs (S3): a download may be redirected to the store
    presigns = False

    @abstractmethod
    async def writer(self) -> BlobWriter: ...

    @abstractmethod
    async def exists(self, sha256: str) -> bool: ...

    @abstractmethod
    async def size(self, sha256: str) -> int:
        """The blob's size in bytes. Raises BlobMissing, StorageUnavailable."""

    @abstractmethod
    def read(self, sha256: str, start: int, end: int) -> AsyncIterator[bytes]:
        """Bytes [start, end) of a blob, in pieces. Raises BlobMissing, StorageUnavailable."""

    @abstractmethod
    def digests(self) -> AsyncIterator[str]:
        """The SHA-256 of every stored blob (any order)."""

    @abstractmethod
    async def delete(self, sha256: str) -> None:
        """Remove a blob; nothing happens when there is none."""

    async def presigned_url(
        self, sha256: str, *, expires: int, disposition: str, content_type: str
    ) -> str:
        """A URL the store itself answers (only where `presigns`)."""
        raise NotImplementedError(f"{type(self).__name__} hands out no URLs of its own")

    @abstractmethod
    async def sweep_incoming(self, older_than: float) -> int:
        """Delete temporary upload data idle for `older_than` seconds (left by a process that
        died mid-upload); returns how many pieces were deleted."""

    async def check(self) -> None:
        """Raise StorageUnavailable when the store cannot be reached (readiness, outage probe)."""
        return None

    async def close(self) -> None:
        return None
