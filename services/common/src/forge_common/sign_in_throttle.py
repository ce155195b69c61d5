"""Sign-in throttling per account name and per client address (docs/accounts.md "Sign-in
throttling"), counted in PostgreSQL so every replica shares one count. It guards every check of a
password: the browser's sign-in form and the API's basic authentication.

An attempt is counted *before* the password is checked and forgiven when it succeeds: a burst
of parallel guesses is counted in full, not raced past the limit. Past the limit, a key is
refused until `blocked_until`, which doubles with every further attempt (capped), and the window
restarts once it has passed quietly. The account key is the name as typed, lower-cased, whether
or not such an account exists, so the answer (429 with Retry-After) and its timing are the same
for both: a refused attempt checks no password at all.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from aiohttp import web

from .db import Queryable
from .errors import ApiError
from .keys import DB_POOL, SETTINGS

ACCOUNT_LIMIT = 5  # attempts per account name in a window before it is refused
ADDRESS_LIMIT = 20  # per client address: one address trying many names
WINDOW_SECONDS = 15 * 60
FIRST_BLOCK_SECONDS = 30
MAX_BLOCK_SECONDS = 15 * 60


class TooManyAttempts(ApiError):
    status = 429
    code = "TooManyAttempts"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "Too many sign-in attempts: try again later",
            headers={"Retry-After": str(retry_after)},
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    retry_after: int = 0  # whole seconds, when refused


def account_key(name: str) -> str:
    return "account:" + name.strip().lower()[:200]


def address_key(address: str) -> str:
    return "address:" + address


def client_address(request: web.Request) -> str:
    """The caller's address: the last `X-Forwarded-For` entry (what our nginx appended) when
    TRUST_FORWARDED_FOR is on, else the connection's peer. An IPv6 address counts by its /64,
    since one machine commonly holds a whole /64."""
    address = request.remote or ""
    if request.app[SETTINGS].trust_forwarded_for:
        forwarded = request.headers.get("X-Forwarded-For", "")
        if forwarded:
            address = forwarded.split(",")[-1].strip()
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64] or "unknown"
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


_ATTEMPT_SQL = """
INSERT INTO core.sign_in_attempts AS a (key, attempts) VALUES ($1, 1)
ON CONFLICT (key) DO UPDATE SET
    attempts = CASE WHEN a.window_start < now() - $2::float8 * interval '1 second'
                     AND (a.blocked_until IS NULL OR a.blocked_until < now())
                    THEN 1 ELSE a.attempts + 1 END,
    window_start = CASE WHEN a.window_start < now() - $2::float8 * interval '1 second'
                         AND (a.blocked_until IS NULL OR a.blocked_until < now())
                        THEN now() ELSE a.window_start END
RETURNING attempts, blocked_until, now() AS at
"""

_BLOCK_SQL = """
UPDATE core.sign_in_attempts
   SET blocked_until = greatest(blocked_until, now() + $2::float8 * interval '1 second')
 WHERE key = $1
RETURNING blocked_until, now() AS at
"""


async def _count(db: Queryable, key: str, limit: int) -> Verdict:
    row = await db.fetchrow(_ATTEMPT_SQL, key, float(WINDOW_SECONDS))
    assert row is not None
    blocked_until, at = row["blocked_until"], row["at"]
    if row["attempts"] <= limit and (blocked_until is None or blocked_until <= at):
        return Verdict(True)
    if row["attempts"] > limit:
        over = row["attempts"] - limit - 1
        block = min(MAX_BLOCK_SECONDS, FIRST_BLOCK_SECONDS * 2 ** min(over, 16))
        blocked = await db.fetchrow(_BLOCK_SQL, key, float(block))
        assert blocked is not None
        blocked_until, at = blocked["blocked_until"], blocked["at"]
    return Verdict(False, max(1, math.ceil((blocked_until - at).total_seconds())))


async def count_attempt(db: Queryable, name: str, address: str) -> Verdict:
    """Count one sign-in attempt for `name` from `address`; refused when either is over."""
    by_account = await _count(db, account_key(name), ACCOUNT_LIMIT)
    by_address = await _count(db, address_key(address), ADDRESS_LIMIT)
    if by_account.allowed and by_address.allowed:
        return Verdict(True)
    return Verdict(False, max(by_account.retry_after, by_address.retry_after))


async def admit(request: web.Request, name: str) -> str:
    """Count an attempt to check `name`'s password from the request's address, before the check;
    TooManyAttempts (429) when either is over its limit. The address, for `forgive`."""
    address = client_address(request)
    verdict = await count_attempt(request.app[DB_POOL], name, address)
    if not verdict.allowed:
        raise TooManyAttempts(verdict.retry_after)
    return address


async def forgive(db: Queryable, name: str, address: str) -> None:
    """A successful sign-in clears its account's count and takes itself off its address's, so an
    address counts failures: an office behind one NAT signs in all day."""
    await db.execute("DELETE FROM core.sign_in_attempts WHERE key = $1", account_key(name))
    await db.execute(
        """UPDATE core.sign_in_attempts SET attempts = greatest(attempts - 1, 0)
            WHERE key = $1""",
        address_key(address),
    )


async def sweep(db: Queryable) -> None:
    """Drop counts whose window and block have both passed (called at each successful sign-in)."""
    await db.execute(
        """DELETE FROM core.sign_in_attempts
            WHERE window_start < now() - $1::float8 * interval '1 second'
              AND (blocked_until IS NULL OR blocked_until < now())""",
        float(WINDOW_SECONDS),
    )
