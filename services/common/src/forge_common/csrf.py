"""Cross-site request forgery defence for every form that changes state (docs/accounts.md "CSRF").

Two independent checks, as OWASP's CSRF cheat sheet recommends:

1. the request's origin: `Origin` (else `Referer`) must be this server, by APP_URL or by the
   request's own `Host`; `Sec-Fetch-Site: cross-site` is refused outright. A request naming no
   origin at all is refused: every browser we serve sends `Origin` on a form post.
2. a synchronizer token: an HMAC of the session's secret, so it is bound to the session, differs
   per session, is never stored, and cannot be computed from the database (which holds only a
   digest of the secret). Before sign-in (the sign-in form itself: login CSRF) the token is bound
   the same way to a random pre-session cookie.

The JSON API needs neither: it never accepts the session cookie (forge_common.accounts.sessions).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiDictProxy

from .accounts.sessions import SESSION, is_https
from .body import read_form
from .errors import PermissionDenied
from .keys import SETTINGS

Form = MultiDictProxy[str]
FIELD = "_csrf"  # Gitea's form field name
_CONTEXT = b"forge csrf v1"
_PENDING_PRE_SESSION = web.RequestKey("forge_pending_pre_session", str)


class CsrfRefused(PermissionDenied):
    code = "CsrfRefused"

    def __init__(self) -> None:
        super().__init__("This form was not sent from this site, or it expired: reload the page")


def pre_session_cookie(request: web.Request) -> str:
    return "__Host-forge_presession" if is_https(request.app[SETTINGS]) else "forge_presession"


def _binding(request: web.Request, *, create: bool) -> str | None:
    session = request.get(SESSION)
    if session is not None:
        return str(session.secret)
    pending = request.get(_PENDING_PRE_SESSION)
    if pending is not None:
        return str(pending)
    value = request.cookies.get(pre_session_cookie(request))
    if value and 20 <= len(value) <= 100 and value.isascii():
        return value
    if not create:
        return None
    value = secrets.token_urlsafe(32)
    request[_PENDING_PRE_SESSION] = value  # set on the response by `set_pre_session_cookie`
    return value


def _token_for(binding: str) -> str:
    return hmac.new(binding.encode(), _CONTEXT, hashlib.sha256).hexdigest()


def csrf_token(request: web.Request) -> str:
    """The token a form of this page must carry in the field `_csrf` (pages put it in every
    template's context as `csrf_token`)."""
    binding = _binding(request, create=True)
    assert binding is not None
    return _token_for(binding)


def set_pre_session_cookie(request: web.Request, response: web.StreamResponse) -> None:
    """Give the response the pre-session cookie a token of this page was bound to, if new."""
    pending = request.get(_PENDING_PRE_SESSION)
    if pending is not None:
        response.set_cookie(
            pre_session_cookie(request),
            pending,
            path="/",
            httponly=True,
            secure=is_https(request.app[SETTINGS]),
            samesite="Strict",
        )


def _origin_of(value: str) -> tuple[str, str] | None:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return parts.scheme.lower(), parts.netloc.lower()


def same_origin(request: web.Request) -> bool:
    """Whether the request says it comes from a page of this server (check 1 above)."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        return False
    claimed = request.headers.get("Origin")
    if claimed is None or claimed == "null":
        referer = request.headers.get("Referer")
        if claimed == "null" or not referer:
            return False
        claimed = referer
    origin = _origin_of(claimed)
    if origin is None:
        return False
    if origin == _origin_of(request.app[SETTINGS].app_url):
        return True
    # The address the browser used (a laptop's 127.0.0.1 when APP_URL says localhost): a forged
    # post comes from another origin than the Host the victim's browser sends us.
    return origin[1] == request.host.lower()


async def checked_form(request: web.Request) -> Form:
    """The posted form, once its origin and CSRF token are checked: call it first in every page
    handler that changes state. Raises CsrfRefused (403, rendered as a page); a body that is not
    a urlencoded UTF-8 form is 415 or 400 (`body.read_form`)."""
    if not same_origin(request):
        raise CsrfRefused()
    form = await read_form(request)
    check_token(request, form.get(FIELD))
    return form


def check_token(request: web.Request, sent: object) -> None:
    """Check both defences for a request whose body `checked_form` must not read (a streamed
    upload, whose `_csrf` field comes before the file, or a token sent in the query string or a
    header). Raises CsrfRefused."""
    if not same_origin(request):
        raise CsrfRefused()
    binding = _binding(request, create=False)
    if not isinstance(sent, str) or not sent or binding is None:
        raise CsrfRefused()
    if not hmac.compare_digest(sent.encode(), _token_for(binding).encode()):
        raise CsrfRefused()


def text_field(form: Form, name: str) -> str:
    """A text field of a checked form ('' when missing)."""
    return form.get(name, "")
