"""Sign-in throttling (docs/accounts.md "Sign-in throttling"), counted in PostgreSQL so every
replica shares one count. It guards every check of a password: the browser's sign-in form, the
password-change form and the API's basic authentication.

Three counts, so that nobody can lock other people out:
- per account and address (`pair:`): one place guessing one account is slowed quickly;
- per address (`address:`): one place trying many names;
- per account from addresses it has not signed in from (`account:`): a bounded cost per account
  (argon2 checks and guesses) whatever the number of addresses guessing.
An address the account signed in from lately (`known:`, kept KNOWN_SECONDS) is counted only per
account and address: a stranger's guesses, from anywhere, never lock its owner out of where they
sign in, nor an office behind one NAT address out of its own accounts.

An attempt is counted *before* the password is checked and forgiven when it succeeds: a burst
of parallel guesses is counted in full, not raced past the limit. Past a limit, a key is
refused until `blocked_until`, which doubles with every further attempt (capped), and the window
restarts once it has passed quietly. The account part of a key is the name's one normalisation
(`names.login_key`), whether or not such an account exists, so the answer (429 with Retry-After)
and its timing are the same for both: a refused attempt checks no password at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aiohttp import web

from ..client_address import client_of, forwarded_entries
from ..db import Queryable
from ..errors import ApiError
from ..keys import DB_POOL, SETTINGS
from ..names import login_key
from . import queries

PAIR_LIMIT = 5  # attempts per account name and address in a window before it is refused
ADDRESS_LIMIT = 20  # per client address: one address trying many names
ACCOUNT_BUDGET = 100  # per account, from addresses it has not signed in from lately
WINDOW_SECONDS = 15 * 60
FIRST_BLOCK_SECONDS = 30
MAX_BLOCK_SECONDS = 15 * 60
KNOWN_SECONDS = 30 * 24 * 3600  # how long an address stays known to an account after a sign-in


class TooManyAttempts(ApiError):
    status = 429
    code = "TooManyAttempts"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"Too many sign-in attempts: try again in {_wait_words(retry_after)}",
            headers={"Retry-After": str(retry_after)},
        )


def _wait_words(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{math.ceil(seconds / 60)} minutes"


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    retry_after: int = 0  # whole seconds, when refused


def _account(name: str) -> str:
    return login_key(name)[:200]


def pair_key(name: str, address: str) -> str:
    return f"pair:{_account(name)}|{address}"


def account_key(name: str) -> str:
    return "account:" + _account(name)


def known_key(name: str, address: str) -> str:
    return f"known:{_account(name)}|{address}"


def address_key(address: str) -> str:
    return "address:" + address


def client_address(request: web.Request) -> str:
    """The caller's address as the trusted proxies saw it (client_address.py)."""
    settings = request.app[SETTINGS]
    return client_of(
        request.remote,
        forwarded_entries(request.headers.getall("X-Forwarded-For", [])),
        settings.trusted_proxies,
        settings.trusted_proxy_hops,
    )


async def _count(db: Queryable, key: str, limit: int) -> Verdict:
    row = await db.fetchrow(queries.COUNT_ATTEMPT, key, float(WINDOW_SECONDS))
    assert row is not None
    blocked_until, at = row["blocked_until"], row["at"]
    if row["attempts"] <= limit and (blocked_until is None or blocked_until <= at):
        return Verdict(True)
    if row["attempts"] > limit:
        over = row["attempts"] - limit - 1
        block = min(MAX_BLOCK_SECONDS, FIRST_BLOCK_SECONDS * 2 ** min(over, 16))
        blocked = await db.fetchrow(queries.BLOCK, key, float(block))
        assert blocked is not None
        blocked_until, at = blocked["blocked_until"], blocked["at"]
    return Verdict(False, max(1, math.ceil((blocked_until - at).total_seconds())))


async def count_attempt(db: Queryable, name: str, address: str) -> Verdict:
    """Count one sign-in attempt for `name` from `address`; refused when a count is over."""
    verdicts = [await _count(db, pair_key(name, address), PAIR_LIMIT)]
    if not await db.fetchval(queries.IS_KNOWN, known_key(name, address)):
        verdicts.append(await _count(db, address_key(address), ADDRESS_LIMIT))
        verdicts.append(await _count(db, account_key(name), ACCOUNT_BUDGET))
    if all(verdict.allowed for verdict in verdicts):
        return Verdict(True)
    return Verdict(False, max(verdict.retry_after for verdict in verdicts))


async def admit(request: web.Request, name: str) -> str:
    """Count an attempt to check `name`'s password from the request's address, before the check;
    TooManyAttempts (429) when a count is over its limit. The address, for `forgive`."""
    address = client_address(request)
    verdict = await count_attempt(request.app[DB_POOL], name, address)
    if not verdict.allowed:
        raise TooManyAttempts(verdict.retry_after)
    return address


async def forgive(db: Queryable, name: str, address: str) -> None:
    """A successful sign-in clears its account and address's count, takes itself off its
    address's (an address counts failures: an office behind one NAT signs in all day), and makes
    the address known to the account. The account's own budget stays: its owner signing in does
    not give a stranger guessing it elsewhere a fresh one."""
    await db.execute(queries.FORGET_ATTEMPTS, pair_key(name, address))
    if not await db.fetchval(queries.IS_KNOWN, known_key(name, address)):
        # only what the attempt added (a known address's attempts are not counted per address):
        # signing in to one's own account again and again earns no guesses at others
        await db.execute(queries.UNCOUNT_ATTEMPT, address_key(address))
    await db.execute(queries.MARK_KNOWN, known_key(name, address), float(KNOWN_SECONDS))


async def sweep(db: Queryable) -> None:
    """Drop counts whose window and block have both passed (called at each successful sign-in)."""
    await db.execute(queries.SWEEP_ATTEMPTS, float(WINDOW_SECONDS))
