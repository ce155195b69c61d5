"""The kinds of signing and verification keys (docs/releases.md "Signing keys"): what a kind's
key is read from, what is stored of it, what its API shows, where its routes are and what its
absence is called. A repository holds at most one key of each kind (migration 0008).

Adding a kind: its entry here (its parser beside it, as minisign.py is Tauri's), and what uses
the key; the table, the SQL and the API routes are shared."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from forge_common.errors import ApiError

from ..errors import TauriKeyNotFound
from .minisign import parse_public_key


@dataclass(frozen=True, slots=True)
class ParsedKey:
    stored: str  # what the row holds (releases.signing_keys.public_key)
    shown: Mapping[str, str]  # what the API and the console show of it


@dataclass(frozen=True, slots=True)
class KeyKind:
    name: str  # releases.signing_keys.kind
    label: str  # in messages and pages: "Tauri public key"
    api_name: str  # the routes' last segment: /api/v2/repos/{owner}/{repo}/<api_name>
    # the text an admin gives (or the stored form) → the key; ValueError says what is wrong
    parse: Callable[[str], ParsedKey]
    not_found: Callable[[], ApiError]

    @property
    def path(self) -> str:
        return f"/api/v2/repos/{{owner}}/{{repo}}/{self.api_name}"


def _tauri(text: str) -> ParsedKey:
    """Tauri's base64 form, the minisign `.pub` file's text, or its key line (minisign.py)."""
    key = parse_public_key(text)
    return ParsedKey(key.line, {"public_key": key.tauri_form, "key_id": key.id_hex})


# A repository's Tauri public key: with one set, an uploaded `.sig` that does not verify
# against its file is refused (check.py)
TAURI = KeyKind("tauri", "Tauri public key", "tauri_key", _tauri, TauriKeyNotFound)

KINDS: tuple[KeyKind, ...] = (TAURI,)

# The instance's OpenPGP keys, which sign the apt and dnf repositories (linux/): rows of this kind
# with no repository, several at once during a rotation, each with its secret key (migration
# 0010). They are made and read through GnuPG (linux/openpgp.py) and managed with
# `forge linux-key` (linux/commands.py), not through a repository's API routes as KINDS are.
OPENPGP = "openpgp"
