"""Reading the `.sig` companion asset Tauri's updater needs (`App.app.tar.gz` →
`App.app.tar.gz.sig`, the base64 minisign signature `tauri signer sign` writes).

The one place the feeds read asset bytes from storage: small files only, off the event loop, and
only when an answer is prepared (answers are kept in the cache afterwards).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiohttp import web

from ..keys import STORAGE
from ..models import Asset

MAX_SIGNATURE_BYTES = 4096  # a minisign signature file in base64 is under 500 bytes


def companion(assets: Sequence[Asset], asset: Asset) -> Asset | None:
    """The asset named `{asset.name}.sig` (case-insensitively), if any."""
    wanted = f"{asset.name}.sig".lower()
    return next((a for a in assets if a.name.lower() == wanted), None)


async def signature_text(app: web.Application, sig: Asset) -> str | None:
    """The signature as Tauri wants it in `signature`: the .sig file's text, trimmed; None when it
    is too large, unreadable or not text."""
    if sig.size > MAX_SIGNATURE_BYTES:
        return None
    path = app[STORAGE].path_of(sig.sha256)
    try:
        raw = await asyncio.to_thread(path.read_bytes)
        return raw.decode("ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None
