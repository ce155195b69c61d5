"""Minisign public keys and signatures in the forms `tauri signer` writes them, and their check.

A Tauri public key (`tauri signer generate`, `plugins.updater.pubkey` in tauri.conf.json) is the
base64 of minisign's two-line `.pub` file; its second line is the key itself: base64 of `Ed`, the
8-byte key id and the 32-byte Ed25519 key. A `.sig` file is the base64 of minisign's four-line
signature file: an untrusted comment, base64 of the algorithm (`ED`: the signature is over the
BLAKE2b-512 digest of the file), the key id and the 64-byte signature, the trusted comment, and the
global signature over the signature and the trusted comment.

Written here rather than taken from a package: the check needs the file's BLAKE2b-512 digest,
computed while streaming it from storage (files of any size, never held in memory), and the
minisign packages on PyPI take the whole file as bytes. The Ed25519 part is `cryptography`'s.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

_KEY_ALGORITHM = b"Ed"
_PREHASHED = b"ED"  # what `tauri signer sign` and minisign write since 0.8
_LEGACY = b"Ed"  # the signature is over the whole file: not accepted here
_TRUSTED = "trusted comment: "


class NotMinisign(ValueError):
    """A key or signature that cannot be read; the message says why."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    key_id: bytes
    key: bytes  # the raw 32-byte Ed25519 key

    @property
    def line(self) -> str:
        """The key line of a `.pub` file (`RW...`), the form stored."""
        return base64.b64encode(_KEY_ALGORITHM + self.key_id + self.key).decode()

    @property
    def id_hex(self) -> str:
        """The key id as minisign prints it (a little-endian number in hex)."""
        return self.key_id[::-1].hex().upper()

    @property
    def tauri_form(self) -> str:
        """What tauri.conf.json holds: the base64 of the whole `.pub` file."""
        text = f"untrusted comment: minisign public key: {self.id_hex}\n{self.line}\n"
        return base64.b64encode(text.encode()).decode()


@dataclass(frozen=True, slots=True)
class Signature:
    key_id: bytes
    signature: bytes
    trusted_comment: bytes
    global_signature: bytes


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise NotMinisign("is not base64") from None


def _lines(text: str) -> list[str]:
    """The lines of a minisign file given as such or as Tauri's base64 of it."""
    if "\n" not in text.strip():
        try:
            text = _b64(text).decode("utf-8")
        except (NotMinisign, UnicodeDecodeError):
            return [text.strip()]  # a bare key line
    return [line.rstrip("\r") for line in text.strip().split("\n")]


def parse_public_key(text: str) -> PublicKey:
    """Tauri's base64 form, the `.pub` file's text, or its key line alone."""
    lines = _lines(text)
    line = lines[-1] if len(lines) in (1, 2) else ""
    raw = _b64(line) if line else b""
    if len(raw) != 42 or raw[:2] != _KEY_ALGORITHM:
        raise NotMinisign("is not a minisign (Tauri) public key")
    return PublicKey(raw[2:10], raw[10:])


def parse_signature(text: str) -> Signature:
    """A `.sig` file: Tauri's base64 form or minisign's own text."""
    lines = _lines(text)
    if len(lines) != 4 or not lines[2].startswith(_TRUSTED):
        raise NotMinisign("is not a minisign signature file")
    raw, global_signature = _b64(lines[1]), _b64(lines[3])
    if len(raw) != 74 or len(global_signature) != 64:
        raise NotMinisign("is not a minisign signature file")
    if raw[:2] == _LEGACY:
        raise NotMinisign("is a legacy (not prehashed) minisign signature; sign with tauri signer")
    if raw[:2] != _PREHASHED:
        raise NotMinisign("uses an unknown signature algorithm")
    comment = lines[2][len(_TRUSTED) :].encode()
    return Signature(raw[2:10], raw[10:], comment, global_signature)


def verify(key: PublicKey, signature: Signature, blake2b_512: bytes) -> str | None:
    """None when `signature` is `key`'s over a file with this BLAKE2b-512 digest (and its trusted
    comment is intact, as minisign and Tauri's updater check); else what is wrong."""
    if signature.key_id != key.key_id:
        return "was made with another key than the repository's Tauri public key"
    public = Ed25519PublicKey.from_public_bytes(key.key)
    try:
        public.verify(signature.signature, blake2b_512)
    except InvalidSignature:
        return "does not verify against the file with the repository's Tauri public key"
    try:
        public.verify(signature.global_signature, signature.signature + signature.trusted_comment)
    except InvalidSignature:
        return "has a trusted comment that does not verify"
    return None
