"""Content-addressed asset storage: a blob's address is its SHA-256 (docs/storage.md).

    base.py     the interface every backend offers (Storage, BlobWriter, Blob) and the hashing
    folder.py   a local folder (STORAGE_URL=file:///path, the default; STORAGE_PATH still works)
    s3.py       an S3-compatible bucket (STORAGE_URL=s3://bucket/prefix), through aiobotocore
    sweep.py    removing blobs no asset references, safely with several replicas
    migrate.py  copying every blob to another backend (`forge storage migrate --to URL`)
    commands.py the `forge storage migrate` and `forge storage sweep` commands

`open_storage(settings)` picks the backend from the settings.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from forge_common.config import ConfigError, Settings

from .base import Blob, BlobMissing, BlobWriter, Storage, StorageUnavailable
from .folder import FolderStorage

if TYPE_CHECKING:
    from .s3 import S3Storage

__all__ = [
    "Blob",
    "BlobMissing",
    "BlobWriter",
    "FolderStorage",
    "S3Storage",
    "Storage",
    "StorageUnavailable",
    "deterministic_bytes",
    "open_storage",
    "storage_at",
]


def storage_at(url: str, settings: Settings) -> Storage:
    """The backend for `url` (`file:///path` or `s3://bucket/prefix`); S3 endpoint, region and
    credentials come from the settings (the AWS_* variables), or botocore's defaults."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"STORAGE_URL: a file URL names no host: {url!r}")
        return FolderStorage(Path(unquote(parts.path)))
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ConfigError(f"STORAGE_URL: an s3 URL names its bucket: {url!r}")
        # imported here: botocore costs every process that never uses S3 (each `forge` command,
        # each replica on a folder) a fifth of a second of CPU at start
        from .s3 import S3Location, S3Storage

        prefix = parts.path.strip("/")
        s3 = settings.s3
        return S3Storage(
            S3Location(
                bucket=parts.netloc,
                prefix=f"{prefix}/" if prefix else "",
                endpoint_url=s3.endpoint_url,
                region=s3.region,
                access_key_id=s3.access_key_id,
                secret_access_key=s3.secret_access_key,
                session_token=s3.session_token,
            )
        )
    raise ConfigError(f"STORAGE_URL must be file:///path or s3://bucket/prefix, not {url!r}")


def open_storage(settings: Settings) -> Storage:
    """The configured backend: STORAGE_URL, else the folder STORAGE_PATH."""
    if settings.storage_url:
        return storage_at(settings.storage_url, settings)
    return FolderStorage(settings.storage_path)


def deterministic_bytes(name: str, size: int, chunk_size: int = 1 << 20) -> list[bytes]:
    """`size` bytes that depend only on `name` (world-file assets given by size), in chunks."""
    seed = hashlib.sha256(name.encode()).digest()
    block = (seed * (chunk_size // len(seed) + 1))[:chunk_size]
    chunks = [block] * (size // chunk_size)
    if size % chunk_size:
        chunks.append(block[: size % chunk_size])
    return chunks


def __getattr__(name: str) -> Any:
    if name == "S3Storage":  # without importing botocore until it is asked for (storage_at)
        from .s3 import S3Storage

        return S3Storage
    raise AttributeError(name)
