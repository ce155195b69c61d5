"""Password hashing: argon2id through argon2-cffi (docs/accounts.md says why).

Hashing costs tens of milliseconds of CPU on purpose, so it runs in a worker thread and never
stalls the event loop. `verify` of a missing account still hashes, against a fixed dummy hash,
so a sign-in for an unknown name takes as long as one for a known name with a wrong password.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import NamedTuple

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ..errors import AuthTokenInvalid

log = logging.getLogger(__name__)


class Argon2Parameters(NamedTuple):
    """argon2id's cost: passes, memory in KiB, lanes (ARGON2_PARAMETERS, `t=3,m=65536,p=4`)."""

    time_cost: int
    memory_kib: int
    parallelism: int

    def __str__(self) -> str:
        return f"t={self.time_cost},m={self.memory_kib},p={self.parallelism}"


# argon2-cffi's defaults are RFC 9106's "low memory" profile: argon2id, t=3, m=64 MiB, p=4.
DEFAULT_PARAMETERS = Argon2Parameters(3, 65536, 4)
# OWASP's cheapest recommended argon2id settings all cost at least this much memory x passes
# (7 MiB x 5 ... 46 MiB x 1); below it a stolen database's hashes are cheaper to guess.
OWASP_MINIMUM_KIB_PASSES = 7168 * 5
_HASHER = PasswordHasher()
# The hash of a password nobody has, made once with the default parameters and kept as text:
# hashing it at import cost every process (each `forge` command included) a third of a second.
# It belongs to no account; a test holds it to DEFAULT_PARAMETERS (they must cost the same work).
_DEFAULT_DUMMY_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$mmGjZukzQUj9FpzQN72b3Q"
    "$Ew3BuCN+II7TgPVzZ3ZaWfLNL4qc2HkkWGHFthRJTMM"
)
_DUMMY_HASH = _DEFAULT_DUMMY_HASH


def current_parameters() -> Argon2Parameters:
    return Argon2Parameters(_HASHER.time_cost, _HASHER.memory_cost, _HASHER.parallelism)


def configure(parameters: Argon2Parameters) -> None:
    """Hash new passwords with `parameters` from now on (the entry point calls it once, from
    ARGON2_PARAMETERS); the dummy hash follows, so a missing account still costs what a wrong
    password does. Hashes made with other parameters still verify and are remade at sign-in."""
    global _HASHER, _DUMMY_HASH
    time_cost, memory_kib, parallelism = parameters
    _HASHER = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism)
    if parameters == DEFAULT_PARAMETERS:
        _DUMMY_HASH = _DEFAULT_DUMMY_HASH
    else:
        _DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))
    if memory_kib * time_cost < OWASP_MINIMUM_KIB_PASSES:
        log.warning(
            "ARGON2_PARAMETERS=%s costs less than OWASP's cheapest recommendation "
            "(memory x passes >= %d KiB): a stolen database's passwords are cheap to guess",
            parameters,
            OWASP_MINIMUM_KIB_PASSES,
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
