"""Browser sessions (docs/accounts.md "Sessions"): stored in PostgreSQL as the SHA-256 of their id,
carried by one HttpOnly cookie, read by page routes only.

The JSON API never reads the cookie (`auth.authenticate` knows only `Authorization`), so a
cross-site request can never act through the API with a visitor's session; pages read it in
`forge_common.pages.page`, the one place a page resolves its viewer (`attach_session`).

A session id is 256 bits from the OS's generator, made anew at every sign-in (never taken from
the request), ended server-side at sign-out, and ended with every other session of the user when
the password changes. It lapses after `SESSION_IDLE_SECONDS` without a request and
`SESSION_ABSOLUTE_SECONDS` after sign-in, whichever comes first.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiohttp import web

from ..auth import BY_SESSION, VIEWER, Viewer
from ..config import Settings
from ..keys import DB_POOL, SETTINGS
from . import queries

if TYPE_CHECKING:
    from ..db import Queryable

# last_seen_at is written at most this often per session: a page view is a read, not a write.
TOUCH_EVERY_SECONDS = 60
MAX_COOKIE_LENGTH = 100  # our ids are 43 characters: anything longer is not ours


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser: its row, its user and the secret from its cookie (never logged)."""

    row_id: int
    viewer: Viewer
    must_change_password: bool
    secret: str = field(repr=False)


SESSION = web.RequestKey("forge_session", Session)


def is_https(settings: Settings) -> bool:
    return settings.app_url.lower().startswith("https://")


def cookie_name(settings: Settings) -> str:
    """`__Host-` when served over https: the browser then insists on Secure, Path=/ and no
    Domain, so no sibling host or plain-http page can plant or shadow the cookie."""
    return "__Host-forge_session" if is_https(settings) else "forge_session"


def session_digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def cookie_of(request: web.Request) -> str | None:
    """The session cookie's value when it could be one of ours."""
    value = request.cookies.get(cookie_name(request.app[SETTINGS]))
    if not value or len(value) > MAX_COOKIE_LENGTH or not value.isascii():
        return None
    return value


def has_session_cookie(request: web.Request) -> bool:
    """Cheap test (no query) for the kept anonymous pages: a visitor who may be signed in is
    served the full way."""
    return cookie_name(request.app[SETTINGS]) in request.cookies


async def start_session(db: Queryable, settings: Settings, user_id: int) -> str:
    """A new session for `user_id`; its secret goes into the cookie (`set_session_cookie`).
    Lapsed sessions of every user are removed on the way (sign-ins are rare, the index makes it
    cheap), so the table holds only live ones and a few lapsed since the last sign-in."""
    secret = secrets.token_urlsafe(32)
    await db.execute(
        queries.START_SESSION,
        session_digest(secret),
        user_id,
        settings.session_idle_seconds,
        settings.session_absolute_seconds,
    )
    return secret


async def find_session(db: Queryable, settings: Settings, secret: str) -> Session | None:
    """The live session of `secret`, its idle clock restarted; None when unknown or lapsed."""
    row = await db.fetchrow(
        queries.FIND_SESSION,
        session_digest(secret),
        settings.session_idle_seconds,
        settings.session_absolute_seconds,
        float(TOUCH_EVERY_SECONDS),
    )
    if row is None:
        return None
    viewer = Viewer(row["user_id"], row["name"], row["is_admin"], method=BY_SESSION)
    return Session(row["id"], viewer, row["must_change_password"], secret)


async def end_session(db: Queryable, secret: str) -> None:
    await db.execute(queries.END_SESSION, session_digest(secret))


async def end_other_sessions(db: Queryable, user_id: int, keep_row_id: int | None) -> int:
    """End every session of `user_id` but `keep_row_id` (a password change); how many ended."""
    status = await db.execute(queries.END_OTHER_SESSIONS, user_id, keep_row_id)
    return int(status.split()[-1])


def set_session_cookie(response: web.StreamResponse, settings: Settings, secret: str) -> None:
    """No Max-Age: the cookie goes when the browser closes, and the server's lifetimes bound it
    anyway. SameSite=Lax: sent when following a link from elsewhere (so a link to a private
    release page works) but not on another site's form post."""
    response.set_cookie(
        cookie_name(settings),
        secret,
        path="/",
        httponly=True,
        secure=is_https(settings),
        samesite="Lax",
    )


def clear_session_cookie(response: web.StreamResponse, settings: Settings) -> None:
    response.del_cookie(
        cookie_name(settings),
        path="/",
        secure=is_https(settings),
        httponly=True,
        samesite="Lax",
    )


async def attach_session(request: web.Request) -> Session | None:
    """Page routes only: when the request carries no token, the session cookie's user becomes
    the viewer (`auth.viewer_of`), exactly as a token of theirs would. A token always wins: a
    script calling a page with one is that token's user."""
    if VIEWER in request:
        return None
    secret = cookie_of(request)
    if secret is None:
        return None
    session = await find_session(request.app[DB_POOL], request.app[SETTINGS], secret)
    if session is None:
        return None
    request[SESSION] = session
    if not session.must_change_password:
        request[VIEWER] = session.viewer
    return session


def session_of(request: web.Request) -> Session | None:
    """The signed-in browser session of a page request (after `pages.page` ran)."""
    return request.get(SESSION)
