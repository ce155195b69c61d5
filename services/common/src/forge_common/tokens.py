"""Access tokens a user makes for themselves: created, listed and deleted in one place, used by the
Gitea-shaped API (`/api/v1/users/{user}/tokens`), `forge admin user generate-access-token` and
the browser's settings page, so the three cannot drift apart.

A token is shown once, when it is made; only its SHA-256 is stored (`auth.hash_token`), with its
last eight characters so its owner can tell tokens apart, as Gitea does.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .auth import hash_token
from .scopes import SCOPE_PUBLISH

if TYPE_CHECKING:
    from .db import Queryable

# Gitea's scope names. `all` is everything the user may do; `write:X` includes `read:X`. And
# forge's own `write:release` (scopes.SCOPE_PUBLISH): publishes releases, nothing else.
SCOPE_ALL = "all"
SCOPE_CATEGORIES = ("repository", "organization", "user", "admin")
KNOWN_SCOPES = frozenset(
    [SCOPE_ALL, SCOPE_PUBLISH]
    + [f"{level}:{category}" for category in SCOPE_CATEGORIES for level in ("read", "write")]
)


@dataclass(frozen=True, slots=True)
class AccessToken:
    id: int
    name: str
    scopes: tuple[str, ...]
    token_last_eight: str
    created_at: datetime
    last_used_at: datetime | None


def new_token_secret() -> str:
    """40 hexadecimal characters, like Gitea's tokens (160 bits from the OS's generator)."""
    return secrets.token_hex(20)


_COLUMNS = "id, name, scopes, token_last_eight, created_at, last_used_at"


def _token(row: object) -> AccessToken:
    values = dict(row)  # type: ignore[call-overload]
    values["scopes"] = tuple(values["scopes"])
    return AccessToken(**values)


async def create_token(
    db: Queryable, user_id: int, name: str, scopes: tuple[str, ...]
) -> tuple[AccessToken, str] | None:
    """The new token and its secret (shown once); None when the user has a token of that name."""
    secret = new_token_secret()
    row = await db.fetchrow(
        f"""INSERT INTO core.access_tokens (user_id, name, token_sha256, scopes, token_last_eight)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT DO NOTHING
            RETURNING {_COLUMNS}""",
        user_id,
        name,
        hash_token(secret),
        list(scopes),
        secret[-8:],
    )
    return (_token(row), secret) if row else None


async def tokens_of(db: Queryable, user_id: int) -> list[AccessToken]:
    rows = await db.fetch(
        f"SELECT {_COLUMNS} FROM core.access_tokens WHERE user_id = $1 ORDER BY id", user_id
    )
    return [_token(row) for row in rows]


async def delete_token(db: Queryable, user_id: int, token_id_or_name: int | str) -> bool:
    """Delete one of the user's tokens by id or by name; False when there is no such token."""
    if isinstance(token_id_or_name, int):
        status = await db.execute(
            "DELETE FROM core.access_tokens WHERE user_id = $1 AND id = $2",
            user_id,
            token_id_or_name,
        )
    elif "\x00" in token_id_or_name:
        return False  # no name holds a NUL (PostgreSQL text cannot)
    else:
        status = await db.execute(
            "DELETE FROM core.access_tokens WHERE user_id = $1 AND lower(name) = lower($2)",
            user_id,
            token_id_or_name,
        )
    return status != "DELETE 0"


class ScopeError(ValueError):
    """A scope forge does not know; the message is Gitea's."""


def normalize_scopes(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Gitea's normalisation: blanks dropped, `all` alone when present, `read:X` dropped beside
    `write:X`, sorted; an unknown name raises ScopeError with Gitea's message."""
    wanted = {name.strip() for name in names if name.strip()}
    unknown = sorted(wanted - KNOWN_SCOPES)
    if unknown:
        raise ScopeError(
            f"invalid access token scope provided: invalid access token scope: {unknown[0]} "
            f"(known: {', '.join(sorted(KNOWN_SCOPES))})"
        )
    if SCOPE_ALL in wanted:
        return (SCOPE_ALL,)
    kept = {s for s in wanted if not (s.startswith("read:") and f"write:{s[5:]}" in wanted)}
    if "write:repository" in kept:
        kept.discard(SCOPE_PUBLISH)  # Gitea's write:repository holds every write to releases
    return tuple(sorted(kept))
