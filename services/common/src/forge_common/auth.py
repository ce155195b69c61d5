"""Authentication: `Authorization: token X`, `Bearer X`, or `Basic` (a user's name and password,
or a token as the password, as Gitea accepts on its API).

Only SHA-256 digests of tokens are stored. A request with a credential we do not know is 401
`AuthTokenInvalid`, never served as anonymous: a typo must not silently downgrade a caller.
A token acts only within its scopes (`scopes.py`); a password acts with every right of its user
(Gitea's scope `all`), as Gitea's basic authentication does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from aiohttp import hdrs, web

from .accounts import sign_in_throttle
from .accounts.passwords import MAX_LENGTH as MAX_PASSWORD_LENGTH
from .accounts.passwords import PasswordTooLong, verify_password
from .errors import AuthTokenInvalid
from .keys import DB_POOL
from .names import login_lookup

ALL_SCOPES: frozenset[str] = frozenset({"all"})

# How the caller proved who they are: Gitea's token routes (`/api/v1/users/{user}/tokens`) want
# a password, so a stolen token cannot mint itself successors.
BY_TOKEN = "token"  # noqa: S105 - a method's name, not a secret
BY_PASSWORD = "password"  # noqa: S105 - a method's name, not a secret
BY_SESSION = "session"  # a browser's session cookie: the console and the pages


@dataclass(frozen=True, slots=True)
class Viewer:
    """The verified caller."""

    id: int
    login: str
    is_admin: bool = False
    scopes: frozenset[str] = ALL_SCOPES
    method: str = BY_TOKEN


VIEWER = web.RequestKey("viewer", Viewer)
# Update keys (the releases service's read-only repository keys, `forge_uk_...`) sent as
# `Authorization: token forge_uk_...`: Velopack's clients can send a key no other way. A service
# that takes them sets UPDATE_KEYS_IN_HEADER; a GET or HEAD with such a token is then anonymous
# here, with the key left in HEADER_UPDATE_KEY for the service to check (forge_releases
# access_keys/grant.py); a route that does not check it answers as to anyone anonymous. A write,
# or a process without such a service: an unknown token, 401 as before.
UPDATE_KEY_PREFIX = "forge_uk_"
UPDATE_KEYS_IN_HEADER = web.AppKey("forge_update_keys_in_header", bool)
HEADER_UPDATE_KEY = web.RequestKey("forge_header_update_key", str)
_SCHEMES = {"token", "bearer"}
# A Gitea client that sends a token as basic auth may put it in the user name, with this password
# or none (Gitea's services/auth/basic.go reads it the same way).
_TOKEN_AS_USERNAME_PASSWORDS = {"", "x-oauth-basic"}


class InvalidBasicCredentials(AuthTokenInvalid):
    """One answer for a wrong password, a missing user and a bad token: nothing to tell apart."""

    def __init__(self) -> None:
        super().__init__("invalid username, password or token")


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def parse_authorization(header: str) -> str:
    """The token of an `Authorization` header; a malformed header is an invalid credential.

    This is the one place credentials are decoded. aiohttp hands over header bytes that are not
    UTF-8 as lone surrogates: they are not printable (nor are control characters), no token
    contains them, and `hash_token` could not encode them.
    """
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() not in _SCHEMES or not token or len(token) > 512:
        raise AuthTokenInvalid()
    if not token.isprintable():
        raise AuthTokenInvalid()
    return token


def parse_basic(header: str) -> tuple[str, str] | None:
    """(user name, password) of a `Basic` header; None when the scheme is another one. A Basic
    header that does not decode is an invalid credential."""
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    encoded = encoded.strip()
    if not encoded or len(encoded) > 2 * MAX_PASSWORD_LENGTH:
        raise InvalidBasicCredentials()
    try:
        decoded = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidBasicCredentials() from None
    username, colon, password = decoded.partition(":")
    if not colon or not decoded.isprintable():
        raise InvalidBasicCredentials()
    return username, password


def viewer_of(request: web.Request) -> Viewer | None:
    return request.get(VIEWER)


def is_anonymous(request: web.BaseRequest) -> bool:
    """Whether the request carries no credentials: no `Authorization` header, and no browser
    session cookie (`forge_session`, or `__Host-forge_session` under https: sessions.py), which
    pages and downloads read. The one definition of "anonymous" (who may be given an answer kept
    for everybody, read/cache.py): it needs no await and no authentication, so the answers given
    before routing (forge_common.fast_path) use it too. A new kind of credential must be added
    here as well as to `authenticate` (or to `sessions.attach_session`)."""
    headers = request.headers
    if hdrs.AUTHORIZATION in headers:
        return False
    cookie = headers.get(hdrs.COOKIE)
    return cookie is None or "forge_session=" not in cookie


# One statement: the lookup, and Gitea's "last used" time, written at most once a minute per
# token (so a busy CI token does not write on every request, and concurrent requests find it fresh
# after the first one's write).
_TOKEN_SQL = """
WITH found AS (SELECT id, user_id, scopes, last_used_at
                 FROM core.access_tokens WHERE token_sha256 = $1),
     touched AS (UPDATE core.access_tokens SET last_used_at = now()
                  WHERE id = (SELECT id FROM found)
                    AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute'))
SELECT a.id, a.name, a.is_admin, found.scopes
  FROM found JOIN core.accounts a ON a.id = found.user_id"""  # noqa: S105


async def _by_token(request: web.Request, token: str) -> Viewer | None:
    row = await request.app[DB_POOL].fetchrow(_TOKEN_SQL, hash_token(token))
    if row is None:
        return None
    return Viewer(row["id"], row["name"], row["is_admin"], frozenset(row["scopes"]))


async def _by_basic(request: web.Request, username: str, password: str) -> Viewer:
    """Gitea's order: the password (or the user name) as a token first, then the password."""
    as_token = username if password in _TOKEN_AS_USERNAME_PASSWORDS else password
    if as_token and len(as_token) <= 512:
        viewer = await _by_token(request, as_token)
        if viewer is not None:
            return viewer
    pool = request.app[DB_POOL]
    if len(password) > MAX_PASSWORD_LENGTH:
        raise PasswordTooLong()  # no password is this long: nothing to check, nothing to count
    address = await sign_in_throttle.admit(request, username)  # 429 past the limits
    row = None
    lookup = login_lookup(username)  # None: a name no account can have matches none
    if lookup is not None:
        row = await pool.fetchrow(
            """SELECT id, name, is_admin, password_hash FROM core.accounts
                WHERE lower(name) = $1 AND kind = 'user'""",
            lookup,
        )
    # verify_password costs the same with no account (a dummy hash): no timing tells them apart
    if not await verify_password(row["password_hash"] if row else None, password) or row is None:
        raise InvalidBasicCredentials()
    await sign_in_throttle.forgive(pool, username, address)
    return Viewer(row["id"], row["name"], row["is_admin"], ALL_SCOPES, BY_PASSWORD)


def _takes_update_keys(request: web.Request) -> bool:
    reads = request.method in (hdrs.METH_GET, hdrs.METH_HEAD)
    return reads and request.app.get(UPDATE_KEYS_IN_HEADER, False)


async def authenticate(request: web.Request) -> None:
    """Set the request's viewer from its credential; no `Authorization` header means anonymous."""
    header = request.headers.get("Authorization")
    if header is None:
        return
    basic = parse_basic(header)
    if basic is not None and basic[1].startswith(UPDATE_KEY_PREFIX) and _takes_update_keys(request):
        # apt's auth.conf and dnf's username/password: the update key as the password
        request[HEADER_UPDATE_KEY] = basic[1]
        return
    if basic is not None:
        request[VIEWER] = await _by_basic(request, *basic)
        return
    token = parse_authorization(header)
    if token.startswith(UPDATE_KEY_PREFIX) and _takes_update_keys(request):
        request[HEADER_UPDATE_KEY] = token
        return
    viewer = await _by_token(request, token)
    if viewer is None:
        raise AuthTokenInvalid()
    request[VIEWER] = viewer
