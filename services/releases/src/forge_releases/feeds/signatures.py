"""Reading the `.sig` companion asset Tauri's updater needs (`App.app.tar.gz` →
`App.app.tar.gz.sig`, the base64 minisign signature `tauri signer sign` writes).

The one place the feeds read asset bytes from storage (any backend: folder or S3): small files
only, and only when an answer is prepared (answers are kept in the cache afterwards).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from aiohttp import web
from forge_common.outage import dependency

from ..keys import STORAGE
from ..models import Asset
from ..storage.base import STORAGE_DEPENDENCY, BlobMissing, StorageUnavailable

MAX_SIGNATURE_BYTES = 4096  # a minisign signature file in base64 is under 500 bytes


def companion(assets: Sequence[Asset], asset: Asset) -> Asset | None:
    """The asset named `{asset.name}.sig` (case-insensitively), if any."""
    wanted = f"{asset.name}.sig".lower()
    return next((a for a in assets if a.name.lower() == wanted), None)


@contextmanager
def storage_outage_as_503(app: web.Application, message: str) -> Iterator[None]:
    """A storage outage while reading is a 503 (and marks the storage down), never an answer or a
    decision made without the bytes."""
    try:
        yield
    except StorageUnavailable as exc:
        raise dependency(app, STORAGE_DEPENDENCY).failed(exc, message) from exc


async def signature_text(app: web.Application, sig: Asset) -> str | None:
    """The signature as Tauri wants it in `signature`: the .sig file's text, trimmed; None when it
    is too large, unreadable or not text."""
    if sig.size > MAX_SIGNATURE_BYTES:
        return None
    # an outage is a 503, never an answer without a signature that the cache would keep
    with storage_outage_as_503(app, "The signature cannot be read right now; try again later"):
        try:
            raw = b"".join([c async for c in app[STORAGE].read(sig.sha256, 0, sig.size)])
            return raw.decode("ascii").strip() or None
        except StorageUnavailable:
            raise  # an OSError too, but an outage: the 503 above
        except (BlobMissing, OSError, UnicodeDecodeError):
            return None
