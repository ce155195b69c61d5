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
from aiohttp import web

from ..errors import ApiError
from ..keys import SETTINGS
from ..outage import database, is_database_down
from .markdown import render_markdown

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# No script at all: the pages need none, and a hostile note or name that slipped through escaping
# and sanitising still could not run. Inline styles only from our own base template.
_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data: {origin}; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PRIVATE = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
PUBLIC = {"Cache-Control": "public, no-cache"}


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
    headers = dict(PUBLIC if public else PRIVATE)
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
    """`template` rendered, with `page_headers`."""
    response = aiohttp_jinja2.render_template(template, request, dict(context), status=status)
    response.headers.update(page_headers(request, public=public, extra=headers))
    return response


def error_page(request: web.Request, error: ApiError) -> web.Response:
    """The API's error as a page: the same status, message and headers (Retry-After on 503)."""
    return page_response(
        request,
        "error.html",
        {"status": error.status, "message": error.message},
        status=error.status,
        headers=error.headers,
    )


def page(handler: Handler) -> Handler:
    """A page handler whose errors render as HTML with the status code the API gives."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ApiError as error:
            return error_page(request, error)
        except Exception as exc:
            if not is_database_down(exc):
                raise
            return error_page(request, database(request.app).failed(exc))

    return wrapped
