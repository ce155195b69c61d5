"""Copying every blob to another backend (`forge storage migrate --to URL`).

Resumable: a blob already at the target is skipped (a blob reaches its address only when
complete, so being there means it was copied whole). Verified: the bytes are hashed on the way
and written only when their SHA-256 is the blob's address; a mismatch is reported, never stored.
Run it while the service keeps serving from the source; switch STORAGE_URL; run it again to copy
what was uploaded meanwhile (docs/storage.md "Moving to S3"). Complete: every blob an asset
references that is neither in the source nor at the target is counted as missing (the wrong
source folder or bucket, a blob lost), and the command then exits non-zero.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .base import BlobMissing, Storage

log = logging.getLogger(__name__)


@dataclass(slots=True)
class MigrateReport:
    copied: int = 0
    copied_bytes: int = 0
    skipped: int = 0  # already at the target
    failed: list[str] = field(default_factory=list)  # digests whose bytes did not match
    # referenced by an asset, yet in neither the source nor the target
    missing: list[str] = field(default_factory=list)


async def copy_blob(source: Storage, target: Storage, sha256: str) -> int | None:
    """Copy one blob; its size, or None when its bytes do not hash to `sha256`."""
    size = await source.size(sha256)
    writer = await target.writer()
    try:
        async for chunk in source.read(sha256, 0, size):
            await writer.write(chunk)
        if writer.hashes.blob().sha256 != sha256:
            writer.abort()
            return None
        await writer.commit()
    except BaseException:
        writer.abort()
        raise
    return size


async def migrate(
    source: Storage,
    target: Storage,
    progress: Callable[[str], None] | None = None,
    *,
    referenced: Iterable[str] = (),
) -> MigrateReport:
    """Copy what the source has; then count the `referenced` blobs (the assets' digests) that
    are at neither end."""
    report = MigrateReport()
    listed: set[str] = set()
    async for digest in source.digests():
        listed.add(digest)
        if await target.exists(digest):
            report.skipped += 1
            continue
        try:
            size = await copy_blob(source, target, digest)
        except BlobMissing:  # deleted since it was listed
            continue
        if size is None:
            log.error("blob %s does not hash to its address: not copied", digest)
            report.failed.append(digest)
            continue
        report.copied += 1
        report.copied_bytes += size
        if progress is not None:
            progress(digest)
    for digest in referenced:
        if digest not in listed and not await target.exists(digest):
            report.missing.append(digest)
    return report
