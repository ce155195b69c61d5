"""Slowing down password guessing on the API's basic authentication (docs/accounts.md
"Authentication"): at most MAX_FAILURES wrong passwords per account name in WINDOW_SECONDS, counted
in PostgreSQL so every replica shares the count. Past that, 429 with Retry-After until the window
ends, for right and wrong passwords alike (or guessing would go on), and for names of no account
alike (or the answer would tell which exist).

Per account name only: behind the reverse proxy every caller has the proxy's address, so a count per
address would lock everyone out at once.
"""

from __future__ import annotations

from .db import Queryable
from .errors import ApiError

MAX_FAILURES = 10
WINDOW_SECONDS = 15 * 60


class TooManyFailures(ApiError):
    status = 429
    code = "TooManyRequests"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "too many failed sign-ins for this account: try again later",
            headers={"Retry-After": str(max(1, retry_after))},
        )


def _key(name: str) -> str:
    return name.strip().lower()[:64]


async def check(db: Queryable, name: str) -> None:
    """TooManyFailures when `name` has used up its failures in the current window."""
    wait = await db.fetchval(
        """SELECT ceil(extract(epoch FROM first_at + make_interval(secs => $2) - now()))::int
             FROM core.password_failures
            WHERE name = $1 AND failures >= $3
              AND first_at > now() - make_interval(secs => $2)""",
        _key(name),
        WINDOW_SECONDS,
        MAX_FAILURES,
    )
    if wait is not None:
        raise TooManyFailures(wait)


async def failed(db: Queryable, name: str) -> None:
    """Count one wrong password for `name`; a window that has ended starts again."""
    await db.execute(
        """INSERT INTO core.password_failures AS f (name, failures) VALUES ($1, 1)
           ON CONFLICT (name) DO UPDATE SET
               failures = CASE WHEN f.first_at <= now() - make_interval(secs => $2) THEN 1
                               ELSE f.failures + 1 END,
               first_at = CASE WHEN f.first_at <= now() - make_interval(secs => $2) THEN now()
                               ELSE f.first_at END""",
        _key(name),
        WINDOW_SECONDS,
    )
