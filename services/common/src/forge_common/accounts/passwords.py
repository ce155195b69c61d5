"""Password hashing: argon2id through argon2-cffi (docs/accounts.md says why).

Hashing costs tens of milliseconds of CPU on purpose, so it runs in a worker thread and never
stalls the event loop. `verify` of a missing account still hashes, against a fixed dummy hash,
so a sign-in for an unknown name takes as long as one for a known name with a wrong password.
"""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ..errors import AuthTokenInvalid

# argon2-cffi's defaults are RFC 9106's "low memory" profile: argon2id, t=3, m=64 MiB, p=4.
_HASHER = PasswordHasher()
# The hash of a password nobody has, made once with today's parameters and kept as text: hashing
# it at import cost every process (each `forge` command included) a third of a second. It belongs
# to no account; a test holds it to `_HASHER`'s parameters (they must cost the same work).
_DUMMY_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$mmGjZukzQUj9FpzQN72b3Q"
    "$Ew3BuCN+II7TgPVzZ3ZaWfLNL4qc2HkkWGHFthRJTMM"
)

MIN_LENGTH = 8
MAX_LENGTH = 1024  # a longer "password" is an attempt to make the server hash megabytes


def password_problem(password: str) -> str | None:
    """Why `password` cannot be set, in words; None when it can."""
    if len(password) < MIN_LENGTH:
        return f"must be at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    return None


def hash_password_sync(password: str) -> str:
    return _HASHER.hash(password)


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(_HASHER.hash, password)


class PasswordTooLong(AuthTokenInvalid):
    """A password longer than any can be: refused as it is, never cut to a length that fits (a
    cut password would match with any suffix). 401 on the API, whose answer to a credential that
    cannot be right it is; the forms say it in their own words."""

    def __init__(self) -> None:
        super().__init__(f"password must be at most {MAX_LENGTH} characters")


def _verify(stored: str | None, password: str) -> bool:
    if len(password) > MAX_LENGTH:
        return False  # callers refuse it first (PasswordTooLong); never cut and compared
    try:
        return _HASHER.verify(stored or _DUMMY_HASH, password) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether `password` matches `stored`; `stored` None (no such account) costs the same."""
    return await asyncio.to_thread(_verify, stored, password)


def needs_rehash(stored: str) -> bool:
    """True when `stored` was made with other parameters than today's (rehash at sign-in)."""
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return False
