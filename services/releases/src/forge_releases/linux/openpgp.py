"""OpenPGP through GnuPG itself (`gpg`, Debian's `gnupg`), never hand-written OpenPGP
(docs/decisions.md): each process keeps its own GNUPGHOME (a private temporary directory, mode
0700, removed when the process stops) into which the instance's secret keys are imported from the
database. Keys are Ed25519 with SHA-512 self-signatures and every signature uses SHA-512, which
Debian 13's apt (Sequoia's policy, checked in the tests with `sqv`) accepts; SHA-1 is refused
there since 2026-02-01.

The secret key never leaves the server: it goes to gpg on its standard input, never on a command
line, and gpg's error output is logged only as its exit status."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence

from forge_common.errors import ServiceUnavailable

log = logging.getLogger(__name__)

GPG = "gpg"
_DIGEST = "SHA512"
_COMMON = (
    "--batch",
    "--no-tty",
    "--quiet",
    "--pinentry-mode",
    "loopback",
    "--passphrase",
    "",
    "--digest-algo",
    _DIGEST,
    "--personal-digest-preferences",
    "SHA512 SHA384 SHA256",
    "--cert-digest-algo",
    _DIGEST,
    "--no-auto-key-locate",
)


class GpgFailed(ServiceUnavailable):
    """gpg said no, or is missing: 503 (its output is not kept: it may quote key material)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Signing is unavailable right now: {message}")


class Keyring:
    """The process's own GnuPG home and the keys imported into it."""

    def __init__(self) -> None:
        self._home: str | None = None
        self._imported: set[str] = set()
        self._lock = asyncio.Lock()

    @property
    def home(self) -> str:
        if self._home is None:
            self._home = tempfile.mkdtemp(prefix="forge-gnupg-")
            os.chmod(self._home, 0o700)
        return self._home

    def close(self) -> None:
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home, self._imported = None, set()

    async def gpg(self, *args: str, given: bytes = b"") -> bytes:
        """gpg's standard output for these arguments, with `given` on its standard input."""
        try:
            process = await asyncio.create_subprocess_exec(
                GPG,
                "--homedir",
                self.home,
                *_COMMON,
                *args,
                # no pipe without input: gpg may exit before reading it, and uvloop raises on
                # the write to a closed pipe where asyncio's own loop ignores it
                stdin=asyncio.subprocess.PIPE if given else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:  # no gpg installed (Debian's gnupg)
            log.error("gpg cannot run: %s", type(exc).__name__)
            raise GpgFailed("gpg cannot run") from None
        try:
            out, _ = await process.communicate(given or None)
        except (BrokenPipeError, ConnectionResetError, RuntimeError):  # it exited unread
            await process.wait()
            log.error("gpg %s stopped before reading its input", args[0])
            raise GpgFailed(f"gpg {args[0]} failed") from None
        if process.returncode != 0:
            log.error("gpg %s failed with exit status %s", args[0], process.returncode)
            raise GpgFailed(f"gpg {args[0]} failed")
        return out

    async def generate(self, user_id: str) -> tuple[str, str, str]:
        """A new Ed25519 signing key: (fingerprint, armored public key, armored secret key)."""
        async with self._lock:
            before = set(await self._fingerprints())
            # --yes: a second key of the same user id (a rotation) is made all the same
            await self.gpg("--yes", "--quick-generate-key", user_id, "ed25519", "sign", "never")
            (fingerprint,) = set(await self._fingerprints()) - before
            self._imported.add(fingerprint)
        return fingerprint, *await self.export(fingerprint, secret=True)

    async def import_secret(self, armored: str) -> tuple[str, str, str]:
        """An operator's secret key (armored or binary text): (fingerprint, public, secret)."""
        async with self._lock:
            before = set(await self._fingerprints())
            await self.gpg("--import", given=armored.encode())
            added = set(await self._fingerprints()) - before
            if len(added) != 1:
                raise GpgFailed("give exactly one secret key")
            (fingerprint,) = added
            self._imported.add(fingerprint)
        return fingerprint, *await self.export(fingerprint, secret=True)

    async def export(self, fingerprint: str, *, secret: bool) -> tuple[str, str]:
        public = (await self.gpg("--armor", "--export", fingerprint)).decode()
        if not secret:
            return public, ""
        return public, (await self.gpg("--armor", "--export-secret-keys", fingerprint)).decode()

    async def public_keys(self, fingerprints: Sequence[str], *, armor: bool) -> bytes:
        """The public keys, as one keyring: armored (`key.asc`) or binary (`key.gpg`)."""
        return await self.gpg(*(["--armor"] if armor else []), "--export", *fingerprints)

    async def ensure(self, secrets: Sequence[tuple[str, str]]) -> None:
        """Import the (fingerprint, armored secret key) not imported into this home yet."""
        async with self._lock:
            for fingerprint, secret in secrets:
                if fingerprint not in self._imported:
                    await self.gpg("--import", given=secret.encode())
                    self._imported.add(fingerprint)

    async def clearsign(self, text: bytes, fingerprints: Sequence[str]) -> bytes:
        """`InRelease`: `text` signed inline by every key."""
        return await self.gpg("--clearsign", *_signers(fingerprints), given=text)

    async def detach_sign(self, data: bytes, fingerprints: Sequence[str]) -> bytes:
        """`Release.gpg` and `repomd.xml.asc`: armored detached signatures by every key."""
        return await self.gpg("--armor", "--detach-sign", *_signers(fingerprints), given=data)

    async def _fingerprints(self) -> list[str]:
        listing = (await self.gpg("--with-colons", "--list-secret-keys")).decode()
        found, primary = [], False
        for line in listing.splitlines():
            fields = line.split(":")
            if fields[0] in ("sec", "ssb"):
                primary = fields[0] == "sec"
            elif fields[0] == "fpr" and primary:
                found.append(fields[9])
                primary = False
        return found


def _signers(fingerprints: Sequence[str]) -> list[str]:
    return [arg for fingerprint in fingerprints for arg in ("--local-user", f"{fingerprint}!")]
