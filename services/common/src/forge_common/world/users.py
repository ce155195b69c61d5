"""`users[i]`: accounts that sign in, with their tokens (stored only as SHA-256 digests) and an
optional password (stored only as an argon2id hash)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg

from .. import checks
from ..accounts.passwords import hash_password_sync, password_problem
from ..auth import hash_token

MAX_TOKEN_LENGTH = 512  # what authentication accepts in an Authorization header


def validate_user(user: Mapping[str, Any], path: str, errors: list[str]) -> str:
    """The user's name, for the checks across every account."""
    name = checks.text(user, "name", path, errors, required=True, pattern=checks.NAME)
    checks.display_name(user, "full_name", path, errors)
    checks.text(user, "email", path, errors)
    checks.flag(user, "admin", path, errors)
    password = checks.text(user, "password", path, errors)
    if password:
        problem = password_problem(password)
        if problem:
            errors.append(f"{path}.password: {problem}")
    for j, token in enumerate(checks.strings(user, "tokens", path, errors)):
        if not token.strip() or len(token) > MAX_TOKEN_LENGTH:
            errors.append(f"{path}.tokens[{j}]: must be 1 to {MAX_TOKEN_LENGTH} characters")
    return name


async def load_users(
    conn: asyncpg.Connection[Any], users: Iterable[Mapping[str, Any]]
) -> dict[str, int]:
    """Lower-cased name → id of each user added."""
    ids = {}
    for user in users:
        user_id = await _insert_user(conn, user)
        ids[user["name"].lower()] = user_id
        for token in user.get("tokens", []):
            await _insert_token(conn, user_id, token)
    return ids


async def _insert_user(conn: asyncpg.Connection[Any], user: Mapping[str, Any]) -> int:
    user_id: int = await conn.fetchval(
        """INSERT INTO core.accounts (kind, name, full_name, email, is_admin, password_hash)
           VALUES ('user', $1, $2, $3, $4, $5) RETURNING id""",
        user["name"],
        user.get("full_name", ""),
        user.get("email", ""),
        user.get("admin", False),
        # optional: a user without one signs in with tokens only (argon2 costs tens of ms)
        hash_password_sync(user["password"]) if user.get("password") else None,
    )
    return user_id


async def _insert_token(conn: asyncpg.Connection[Any], user_id: int, token: str) -> None:
    await conn.execute(
        "INSERT INTO core.access_tokens (user_id, name, token_sha256) VALUES ($1, 'world', $2)",
        user_id,
        hash_token(token),
    )
