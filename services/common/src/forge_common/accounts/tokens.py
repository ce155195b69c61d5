"""Access tokens a user makes for themselves: created, listed and deleted in one place, used by the
Gitea-shaped API (`/api/v1/users/{user}/tokens`), `forge admin user generate-access-token` and
the browser's settings page, so the three cannot drift apart.

A token is shown once, when it is made; only its SHA-256 is stored (`auth.hash_token`), with its
last eight characters so its owner can tell tokens apart, as Gitea does.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from .. import audit
from ..auth import hash_token
from ..db import Conn, Queryable, transaction
from ..scopes import SCOPE_PUBLISH
from . import queries

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


def _token(row: object) -> AccessToken:
    values = dict(row)  # type: ignore[call-overload]
    values["scopes"] = tuple(values["scopes"])
    return AccessToken(**values)


@asynccontextmanager
async def _transaction(db: Queryable) -> AsyncIterator[Conn]:
    """A transaction on `db`: a pool's connection, or a savepoint of the caller's connection."""
    if isinstance(db, asyncpg.Pool):
        async with transaction(db) as conn:
            yield conn
    else:
        async with db.transaction():
            yield db


async def _audit(conn: Conn, kind: str, user_id: int, changes: dict[str, tuple[Any, Any]]) -> None:
    """The token's audit entry: its id, name and scopes, never the token nor any part of it.
    The actor is whoever made the request (an admin may make another user's token)."""
    owner = await conn.fetchval(queries.ACCOUNT_NAME_BY_ID, user_id)
    await audit.record_here(
        conn, kind=kind, target=f"user {owner}", changes=changes, actor_id=user_id
    )


async def create_token(
    db: Queryable, user_id: int, name: str, scopes: tuple[str, ...]
) -> tuple[AccessToken, str] | None:
    """The new token and its secret (shown once); None when the user has a token of that name."""
    secret = new_token_secret()
    async with _transaction(db) as conn:
        made = await _insert(conn, user_id, name, secret, scopes)
        if made is not None:
            changes = {"token_id": (None, made.id), "name": (None, name)}
            await _audit(conn, "token.created", user_id, {**changes, "scopes": (None, scopes)})
    return (made, secret) if made else None


async def _insert(
    conn: Conn, user_id: int, name: str, secret: str, scopes: tuple[str, ...]
) -> AccessToken | None:
    row = await conn.fetchrow(
        queries.INSERT_TOKEN,
        user_id,
        name,
        hash_token(secret),
        list(scopes),
        secret[-8:],
    )
    return _token(row) if row else None


async def tokens_of(db: Queryable, user_id: int) -> list[AccessToken]:
    rows = await db.fetch(queries.TOKENS_OF, user_id)
    return [_token(row) for row in rows]


async def delete_token(db: Queryable, user_id: int, token_id_or_name: int | str) -> bool:
    """Delete one of the user's tokens by id or by name; False when there is no such token."""
    if isinstance(token_id_or_name, str) and "\x00" in token_id_or_name:
        return False  # no name holds a NUL (PostgreSQL text cannot)
    by_id = isinstance(token_id_or_name, int)
    sql = queries.DELETE_TOKEN_BY_ID if by_id else queries.DELETE_TOKEN_BY_NAME
    async with _transaction(db) as conn:
        rows = await conn.fetch(sql, user_id, token_id_or_name)
        for row in rows:
            changes = {"token_id": (row["id"], None), "name": (row["name"], None)}
            await _audit(conn, "token.deleted", user_id, changes)
    return bool(rows)


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
