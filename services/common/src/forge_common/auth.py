"""Token authentication: `Authorization: token X` or `Bearer X`.

Only SHA-256 digests of tokens are stored. A request with a token we do not know is 401
`AuthTokenInvalid`, never served as anonymous: a typo must not silently downgrade a caller.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from aiohttp import hdrs, web

from .errors import AuthTokenInvalid
from .keys import DB_POOL


@dataclass(frozen=True, slots=True)
class Viewer:
    """The verified caller."""

    id: int
    login: str
    is_admin: bool = False


VIEWER = web.RequestKey("viewer", Viewer)
_SCHEMES = {"token", "bearer"}


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


def viewer_of(request: web.Request) -> Viewer | None:
    return request.get(VIEWER)


def is_anonymous(request: web.BaseRequest) -> bool:
    """Whether the request carries no credentials: exactly the requests `authenticate` leaves
    without a viewer and without an error. The one definition of "anonymous" (who may be given
    an answer kept for everybody, read/cache.py): it needs no await and no authentication, so the
    answers given before routing (forge_common.fast_path) use it too. A new kind of credential
    (a session cookie) must be added here as well as to `authenticate`."""
    return hdrs.AUTHORIZATION not in request.headers


async def authenticate(request: web.Request) -> None:
    """Set the request's viewer from its token; no `Authorization` header means anonymous."""
    header = request.headers.get(hdrs.AUTHORIZATION)
    if header is not None:
        token = parse_authorization(header)
        row = await request.app[DB_POOL].fetchrow(
            """SELECT a.id, a.name, a.is_admin
                 FROM core.access_tokens t JOIN core.accounts a ON a.id = t.user_id
                WHERE t.token_sha256 = $1""",
            hash_token(token),
        )
        if row is None:
            raise AuthTokenInvalid()
        request[VIEWER] = Viewer(row["id"], row["name"], row["is_admin"])
