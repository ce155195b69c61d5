"""With a Tauri public key set, an asset and its `.sig` must agree (docs/releases.md "Tauri public
key"): checked when the second file of a pair is recorded, inside attach_asset's transaction with
the release locked, so two concurrent uploads cannot slip a bad pair past each other. The file is
read back from storage (any backend) and hashed with BLAKE2b-512, as Tauri's updater will."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from aiohttp import web
from forge_common.db import Conn

from ..errors import TauriSignatureInvalid
from ..feeds.signatures import companion, signature_text, storage_outage_as_503
from ..keys import STORAGE
from ..models import Asset
from . import queries
from .kinds import TAURI
from .minisign import NotMinisign, parse_public_key, parse_signature, verify

_SIG = ".sig"


def _pair(others: Sequence[Asset], new: Asset) -> tuple[Asset, Asset] | None:
    """(file, its .sig) when `new` completes such a pair with one of `others`."""
    if new.name.lower().endswith(_SIG):
        wanted = new.name[: -len(_SIG)].lower()
        signed = next((a for a in others if a.name.lower() == wanted), None)
        return None if signed is None else (signed, new)
    sig = companion(others, new)
    return None if sig is None else (new, sig)


async def _blake2b(app: web.Application, asset: Asset) -> bytes:
    digest = hashlib.blake2b(digest_size=64)
    with storage_outage_as_503(app, "The file cannot be read right now; try again later"):
        async for chunk in app[STORAGE].read(asset.sha256, 0, asset.size):
            digest.update(chunk)
    return digest.digest()


async def check_pair(
    app: web.Application, conn: Conn, repo_id: int, others: Sequence[Asset], new: Asset
) -> None:
    """Raise TauriSignatureInvalid (422) when `new` completes a file/`.sig` pair of a repository
    with a Tauri public key and the signature does not verify against the file."""
    pair = _pair(others, new)
    if pair is None:
        return
    row = await queries.key_of(conn, repo_id, TAURI.name)
    if row is None:
        return
    signed, sig = pair
    try:
        signature = parse_signature(await signature_text(app, sig) or "")
    except NotMinisign as exc:
        raise TauriSignatureInvalid(sig.name, str(exc)) from None
    problem = verify(parse_public_key(row["public_key"]), signature, await _blake2b(app, signed))
    if problem is not None:
        raise TauriSignatureInvalid(sig.name, problem)
