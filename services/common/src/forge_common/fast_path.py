"""Answers given before routing, for a route whose answer is already prepared (the update check).

Profiled under load (docs/decisions.md), a cached update check spent about as much of
the service's CPU in aiohttp's router and middleware chain (the forge middleware, aiohttp's own
current-app layer, one coroutine per layer) as in everything else forge adds, while the bare
handler it is measured against has no middleware. A service registers a `FastPath` for such a
route; `forge serve`'s server (serving.py `ForgeRunner`) offers each plain GET to it first. The
fast path either answers exactly what the routed request would have been answered (status,
body, headers; the request contract of the middleware, `open_request` and `close_request`: the
request id, the security headers, counted under the route in the request metrics) or returns
None, and the request takes the ordinary way.

Only requests that cannot need anything the ordinary way does are offered: GET (not HEAD), no
body, no `Expect`, and a path whose variable parts are plain segments (letters, digits, `.`, `_`,
`-`, not starting with a dot), which the raw and the percent-decoded path spell alike, so the
router would match them to the same route with the same values. The answerer declines anything
else itself (a token, an answer not cached).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import hdrs, web
from aiohttp.web_urldispatcher import AbstractResource, AbstractRoute

from .metrics import METRICS
from .middleware import close_request, open_request

# (request, the route's variable parts by name) -> the answer, or None: take the ordinary way
Answerer = Callable[[web.BaseRequest, Mapping[str, str]], web.StreamResponse | None]
# what aiohttp's low-level server calls per request (the application's `_handle`)
RequestHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]

_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9._-]*"
_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class FastPath:
    """`answer` for the paths of `resource` (a route of the application's router). Register it
    only for a route the router tries first for every path it matches."""

    __slots__ = ("_pattern", "answer", "resource")

    def __init__(self, resource: AbstractResource, answer: Answerer) -> None:
        self.resource = resource
        self.answer = answer
        literal = _VARIABLE.split(resource.canonical)  # literals at even, names at odd indexes
        self._pattern = re.compile(
            "".join(
                f"(?P<{part}>{_SEGMENT})" if i % 2 else re.escape(part)
                for i, part in enumerate(literal)
            )
        )

    def match(self, raw_path: str) -> dict[str, str] | None:
        found = self._pattern.fullmatch(raw_path)
        return found.groupdict() if found is not None else None


FAST_PATHS = web.AppKey("fast_paths", list[FastPath])


def add_fast_path(app: web.Application, route: AbstractRoute, answer: Answerer) -> None:
    """`answer` for the paths of `route` (just added to the app's router), before routing."""
    if route.resource is None:
        raise ValueError(f"{route!r} has no resource")
    app.setdefault(FAST_PATHS, []).append(FastPath(route.resource, answer))


def with_fast_paths(app: web.Application, handler: RequestHandler) -> RequestHandler:
    """`handler` (the application's own request handler) behind `app`'s fast paths, if any."""
    registered: list[FastPath] = app.get(FAST_PATHS, [])
    paths = tuple(registered)
    if not paths:
        return handler
    requests = app[METRICS].requests

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == hdrs.METH_GET and not request.body_exists:
            started = time.perf_counter()
            headers = request.headers
            if hdrs.EXPECT not in headers:
                raw_path = request.rel_url.raw_path
                for path in paths:
                    values = path.match(raw_path)
                    if values is None:
                        continue
                    response = path.answer(request, values)
                    if response is None:
                        break
                    open_request(request)  # the middleware's contract, as for a routed request
                    close_request(requests, request, response, started, path.resource)
                    return response
        return await handler(request)

    return handle
