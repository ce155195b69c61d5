"""The Jinja2 environment of a process and the responses every page gives.

In `forge serve --all` the three services share one application: each service's `setup` adds its
own template package to the one environment, so templates are named `<service>/<page>.html`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import hdrs, web

from ..accounts.sessions import SESSION, attach_session, session_of
from ..auth import viewer_of
from ..csrf import csrf_token, set_pre_session_cookie
from ..errors import ApiError, PermissionDenied
from ..health import unavailable
from ..keys import SETTINGS
from ..scopes import check_page_scopes
from ..units import human_size
from .markdown import render_markdown
from .return_to import sign_in_url

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# No script at all: the pages need none, and a hostile note or name that slipped through escaping
# and sanitising still could not run. Inline styles only from our own base template.
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: {origin}; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
PUBLIC = {"Cache-Control": "public, no-cache"}
# A signed-in browser's page names them in its header: never stored by a shared cache.
SIGNED_IN = {"Cache-Control": "private, no-cache", "Vary": "Authorization, Cookie"}
# Where a visitor whose password must change is sent (forge_orgs' account pages serve it), and
# the pages such a visitor may still open.
CHANGE_PASSWORD_PATH = "/user/settings/change_password"  # noqa: S105 (a path)
_WHILE_MUST_CHANGE = (CHANGE_PASSWORD_PATH, "/user/logout")


def setup(app: web.Application, package: str) -> None:
    """Add `package`'s `templates/` folder (and, once, the shared layout) to the app's
    environment."""
    loader = jinja2.PackageLoader(package, "templates")
    environment = app.get(aiohttp_jinja2.APP_KEY)
    if environment is None:
        environment = aiohttp_jinja2.setup(
            app,
            loader=jinja2.ChoiceLoader([jinja2.PackageLoader(__name__, "templates")]),
            autoescape=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        environment.globals["app_url"] = app[SETTINGS].app_url
        environment.filters["markdown"] = render_markdown
        environment.filters["size"] = human_size  # not filesizeformat: one unit system
    assert isinstance(environment.loader, jinja2.ChoiceLoader)
    environment.loader.loaders = [*environment.loader.loaders, loader]


@functools.lru_cache(maxsize=8)  # one APP_URL per process
def _csp(app_url: str) -> str:
    parts = urlsplit(app_url)
    return _CSP.format(origin=f"{parts.scheme}://{parts.netloc}" if parts.netloc else "")


def page_headers(
    request: web.Request, *, public: bool = False, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The headers of every page: a CSP that allows no script, and the API's caching rule
    (`public` only for what every anonymous caller sees alike); `extra` last (a `Vary` joins)."""
    headers = dict(SIGNED_IN if SESSION in request else PUBLIC if public else PRIVATE)
    headers["Content-Security-Policy"] = _csp(request.app[SETTINGS].app_url)
    headers["Referrer-Policy"] = "same-origin"
    for name, value in (extra or {}).items():
        if name == "Vary" and "Vary" in headers:  # both: Authorization and the page's own
            value = f"{headers['Vary']}, {value}"
        headers[name] = value
    return headers


def page_response(
    request: web.Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    public: bool = False,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """`template` rendered, with `page_headers` and the signed-in visitor's context."""
    full = {**page_context(request), **context}
    response = aiohttp_jinja2.render_template(template, request, full, status=status)
    response.headers.update(page_headers(request, public=public, extra=headers))
    set_pre_session_cookie(request, response)
    return response


def see_other(location: str) -> web.Response:
    """303 to a path of this server: the answer to a successful form post, so that a reload
    does not post again."""
    return web.Response(status=303, headers={"Location": location, "Cache-Control": "no-store"})


def page_context(request: web.Request) -> dict[str, Any]:
    """What the base template needs on every page: who is signed in (a browser session, never a
    token's user: a token cannot sign out) and the CSRF token of the sign-out form."""
    session = session_of(request)
    if session is None:
        return {"signed_in": None, "csrf_token": "", "sign_in_url": sign_in_url(request)}
    return {
        "signed_in": session.viewer.login,
        "csrf_token": csrf_token(request),
        "sign_in_url": "",
    }


def error_page(request: web.Request, error: ApiError) -> web.Response:
    """The API's error as a page: the same status, message and headers (Retry-After on 503)."""
    return page_response(
        request,
        "error.html",
        {
            "status": error.status,
            "message": error.message,
        },
        status=error.status,
        headers=error.headers,
    )


_PAGE_MARK = "forge_page"


def is_page_handler(handler: object) -> bool:
    return bool(getattr(handler, _PAGE_MARK, False))


def mark_page(handler: Handler) -> Handler:
    """Mark a page handler that takes a path of its own before `page` (a kept answer), so that
    aiohttp's own errors on its route (405) are pages too."""
    setattr(handler, _PAGE_MARK, True)
    return handler


class FormTakesNoToken(PermissionDenied):
    code = "FormTakesNoToken"

    def __init__(self) -> None:
        super().__init__(
            "Forms act only for a browser signed in on this site: send no Authorization header "
            "(a script uses the API, where the token's scopes apply)"
        )


# The methods a page answers without changing anything; any other is a form's post.
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_form_post(request: web.BaseRequest) -> bool:
    """Whether the request posts to a page's form: it acts for a browser session only
    (docs/accounts.md "Forms act for sessions only"), so the middleware authenticates no
    `Authorization` header for it, and `page` refuses one."""
    if request.method in _READS:
        return False
    return isinstance(request, web.Request) and is_page_handler(request.match_info.handler)


def page(handler: Handler) -> Handler:
    """A page handler: its viewer is the token's user or the signed-in browser's
    (`sessions.attach_session`: `auth.viewer_of` then answers for either), and its errors render
    as HTML with the status code the API gives. A visitor whose password must change is sent to
    change it first. A form's post carrying `Authorization` is refused (403): a token acts only
    through the API, within its scopes, never through a form (docs/accounts.md); a token that reads
    a page needs the scopes of what pages show (scopes.PAGE_SCOPES), or it is 403."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            if request.method not in _READS and hdrs.AUTHORIZATION in request.headers:
                raise FormTakesNoToken()
            session = await attach_session(request)
            if (
                session is not None
                and session.must_change_password
                and request.path not in _WHILE_MUST_CHANGE
            ):
                raise web.HTTPSeeOther(CHANGE_PASSWORD_PATH)
            viewer = viewer_of(request)
            if viewer is not None:
                check_page_scopes(viewer.scopes)
            return await handler(request)
        except ApiError as error:
            return error_page(request, error)
        except Exception as exc:
            down = unavailable(request.app, exc)  # the database down or not migrated: 503
            if down is None:
                raise
            return error_page(request, down)

    return mark_page(wrapped)


def html_errors(handler: Handler) -> Handler:
    """A page handler that reads no session (an avatar: the same for everyone), with HTML
    errors."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as error:
            return error_page(request, error)

    return mark_page(wrapped)
