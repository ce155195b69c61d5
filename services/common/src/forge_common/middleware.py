"""The one middleware of every app: request id, authentication, error rendering and request
metrics. Handlers raise, this module renders.

The request contract, what every answer carries however it was given (by this middleware, or
before routing by a fast path, forge_common.fast_path), is `open_request` and `close_request`:
the request id, the security headers (`stamp`) and the request metrics. Anything every answer must
carry goes there, so the fast paths cannot skip it.

Errors on `/api/v1/` paths use the version-1 body, everything else the version-2 body
(docs/http.md "Errors"); `/api/v3/` (the GitHub-shaped releases API, docs/compat.md) uses the
version-1 body too, which is GitHub's `{"message"}`.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import time
from collections.abc import MutableMapping

from aiohttp import web
from aiohttp.typedefs import Handler
from aiohttp.web_urldispatcher import AbstractResource

from .audit.origin import request_var as audit_request_var
from .auth import VIEWER, authenticate
from .body import receive_body, wants_body_received
from .errors import ApiError, MethodNotAllowed, NotFound, PayloadTooLarge
from .health import unavailable
from .keys import SETTINGS
from .logs import request_id_var
from .metrics import METRICS
from .metrics.requests import RequestMetrics
from .outage import database, is_database_down
from .pages.render import error_page, is_form_post, is_page_handler
from .render import json_response
from .scopes import check_scopes

log = logging.getLogger(__name__)

REQUEST_ID = web.RequestKey("request_id", str)
REQUEST_ID_HEADER = "X-Request-Id"
# Browsers must never guess a type: an uploaded asset declared text/html must not render as a page.
NOSNIFF = ("X-Content-Type-Options", "nosniff")
# A caller's id is echoed only when it is short and plain, so it cannot inject into logs or headers.
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


# A new id is 32 hex digits like uuid4().hex: this process's random half and a counter. Unique
# (ids only correlate log lines; they guard nothing), without a getrandom call per request, which
# showed in the update check's profile (bench/RESULTS.md).
_PROCESS_ID = os.urandom(8).hex()
_SEQUENCE = itertools.count(int.from_bytes(os.urandom(4), "big"))


def request_id_of(incoming: str) -> str:
    """The caller's id when it is short and plain, else a new one (docs/http.md "Request ids")."""
    if incoming and _SAFE_REQUEST_ID.match(incoming):
        return incoming
    return f"{_PROCESS_ID}{next(_SEQUENCE) & 0xFFFFFFFFFFFFFFFF:016x}"


def open_request(request: web.BaseRequest) -> str:
    """The request contract's start: the request's id, kept on the request."""
    request_id = request_id_of(request.headers.get(REQUEST_ID_HEADER, ""))
    request[REQUEST_ID] = request_id
    return request_id


def close_request(
    metrics: RequestMetrics,
    request: web.BaseRequest,
    response: web.StreamResponse,
    started: float,
    resource: AbstractResource | None,
) -> None:
    """The request contract's end, for every answer: the headers every response carries (a
    response already started was stamped by its handler, `stamp_headers`), and the request
    counted under its route's `resource` (None: no route matched)."""
    if not response.prepared:
        stamp(response.headers, request.get(REQUEST_ID, ""))
    metrics.observe_route(resource, request.method, response.status, time.perf_counter() - started)


def stamp(headers: MutableMapping[str, str], request_id: str) -> None:
    """The headers every response carries: its request id and the security headers."""
    if request_id:
        headers[REQUEST_ID_HEADER] = request_id
    headers[NOSNIFF[0]] = NOSNIFF[1]


def is_v1(path: str) -> bool:
    return path.startswith(("/api/v1/", "/api/v3/"))


@web.middleware
async def forge_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Request id, token authentication, error rendering and request metrics in one layer: the
    update check is hot enough for each extra middleware layer (and an on_response_prepare
    signal) to show.

    Every response carries the request id and `nosniff`; handlers that prepare a streamed
    response themselves call `stamp_headers` first."""
    started = time.perf_counter()
    request_id = open_request(request)
    token = request_id_var.set(request_id)
    request_token = audit_request_var.set(request)
    try:
        if not is_form_post(request):  # a form acts for its session only, never for a token
            await authenticate(request)
        viewer = request.get(VIEWER)
        if viewer is not None and "all" not in viewer.scopes:
            check_scopes(viewer.scopes, request.method, request.path, request.raw_path)
        if wants_body_received(request):
            await receive_body(request, request.app[SETTINGS].body_read_timeout)
        response = await handler(request)
    except ApiError as error:
        response = render_error(request, error)
    except web.HTTPException as exc:
        if exc.status < 400:  # 304 and redirects are answers, not errors
            _close(request, exc, started)
            raise
        translated = translate_http_exception(exc)
        if isinstance(exc, web.HTTPMethodNotAllowed) and await is_page_route(request):
            response = error_page(request, translated)  # docs/pages.md: errors of pages are pages
        else:
            response = render_error(request, translated)
    except ConnectionResetError as exc:
        if not is_database_down(exc):  # the caller went away: nobody to answer
            raise
        response = render_error(request, database(request.app).failed(exc))
    except Exception as exc:
        # docs/architecture.md "Dependency outages": the database down or not migrated yet is a
        # 503, logged once
        down = unavailable(request.app, exc)
        if down is not None:
            response = render_error(request, down)
        else:
            log.exception("unhandled error serving %s %s", request.method, request.path)
            response = render_error(request, ApiError("Internal server error"))
    finally:
        request_id_var.reset(token)
        audit_request_var.reset(request_token)
    _close(request, response, started)
    return response


async def is_page_route(request: web.Request) -> bool:
    """Whether the path is a page's (its GET handler is one), for errors aiohttp raises before
    any handler runs: a form posted to a page that takes none is an HTML 405, not JSON."""
    if request.path.startswith("/api/"):
        return False
    for resource in request.app.router.resources():
        _, allowed = await resource.resolve(request)  # the methods it takes at this path
        if "GET" in allowed:
            return any(r.method == "GET" and is_page_handler(r.handler) for r in resource)
    return False


def _close(request: web.Request, response: web.StreamResponse, started: float) -> None:
    route = request.match_info.route
    close_request(request.app[METRICS].requests, request, response, started, route.resource)


def stamp_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """The headers every response carries, for a handler that prepares (streams) its response
    itself: call it before `prepare()`."""
    stamp(response.headers, request.get(REQUEST_ID, ""))


def render_error(request: web.BaseRequest, error: ApiError) -> web.Response:
    return error_response(error, v1=is_v1(request.path), request_id=request.get(REQUEST_ID, ""))


def error_response(error: ApiError, *, v1: bool, request_id: str) -> web.Response:
    """The error body of either API version (docs/http.md "Errors"); callers outside the
    middleware (forge_common.serving) also stamp the request id and `nosniff` headers."""
    headers = dict(error.headers)
    if v1:
        body: dict[str, object] = {"message": error.message}
        if error.errors:
            body["errors"] = error.errors
    else:
        body = {
            "error": {
                "code": error.code,
                "message": error.message,
                "status": error.status,
                "request_id": request_id,
            }
        }
    response = json_response(body, status=error.status, headers=headers)
    if error.close_connection:
        response.force_close()
    return response


def translate_http_exception(exc: web.HTTPException) -> ApiError:
    """aiohttp's own errors (no route, wrong method, body over client_max_size) in our shape."""
    if isinstance(exc, web.HTTPMethodNotAllowed):
        return MethodNotAllowed(sorted(exc.allowed_methods))
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return PayloadTooLarge("Request body too large")
    if exc.status == 404:
        return NotFound("Not found")
    error = ApiError(exc.reason or "Error", code="HTTPError")
    error.status = exc.status
    return error
