"""A minisign key pair that signs the way `tauri signer sign` does (prehashed: Ed25519 over the
file's BLAKE2b-512, plus the global signature over the trusted comment), for tests of the Tauri
public key; tests-e2e/clients/test_updaters.py uses the real `tauri signer`."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


@dataclass
class Signer:
    """A minisign key pair, as `tauri signer generate` makes one."""

    secret: Ed25519PrivateKey
    key_id: bytes

    @classmethod
    def new(cls) -> Signer:
        return cls(Ed25519PrivateKey.generate(), os.urandom(8))

    @property
    def line(self) -> str:
        raw = self.secret.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return base64.b64encode(b"Ed" + self.key_id + raw).decode()

    @property
    def pub_file(self) -> str:
        key_id = self.key_id[::-1].hex().upper()
        return f"untrusted comment: minisign public key: {key_id}\n{self.line}\n"

    @property
    def tauri_form(self) -> str:
        return base64.b64encode(self.pub_file.encode()).decode()

    def sign(self, data: bytes, comment: str = "timestamp:1\tfile:App.app.tar.gz") -> bytes:
        """The `.sig` file `tauri signer sign` writes for `data`: base64 of the minisign text."""
        signature = self.secret.sign(hashlib.blake2b(data).digest())
        global_signature = self.secret.sign(signature + comment.encode())
        text = (
            "untrusted comment: signature from tauri secret key\n"
            f"{base64.b64encode(b'ED' + self.key_id + signature).decode()}\n"
            f"trusted comment: {comment}\n"
            f"{base64.b64encode(global_signature).decode()}\n"
        )
        return base64.b64encode(text.encode())
