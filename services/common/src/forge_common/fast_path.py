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
router would match them to the same route with the same values. A route's `key_of` makes the key
its answer is kept under from the request target alone (path and query: a feed's update key in
the query makes it decline), so what a target matched and its key are worked out once and
remembered for the target's repeats; the answerer declines anything else itself (a token, an
answer not kept).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import hdrs, web
from aiohttp.web_urldispatcher import AbstractResource, AbstractRoute

from .metrics import METRICS
from .middleware import close_request, open_request

# (request, the route's variable parts by name) -> what the kept answer is kept under, from the
# request target alone (its path and query), or None: never answered before routing
Keyer = Callable[[web.BaseRequest, Mapping[str, str]], str | None]
# (request, the route's variable parts, the key) -> the answer, or None: take the ordinary way
Answerer = Callable[[web.BaseRequest, Mapping[str, str], str], web.StreamResponse | None]
# what aiohttp's low-level server calls per request (the application's `_handle`)
RequestHandler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]

_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9._-]*"
_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Request targets remembered with what they matched (docs/decisions.md "The update feeds"): the
# apps that ask every few minutes repeat the same few targets; a flood of distinct ones empties
# the memo when it is full and costs what every request cost without it.
KNOWN_TARGETS = 4096


class FastPath:
    """`answer` for the paths of `resource` (a route of the application's router), under the key
    `key_of` makes. Register it only for a route the router tries first for every path it
    matches."""

    __slots__ = ("_pattern", "answer", "key_of", "resource")

    def __init__(self, resource: AbstractResource, key_of: Keyer, answer: Answerer) -> None:
        self.resource = resource
        self.key_of = key_of
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
# a request target's fast path, its variable parts and its key; None: it has none
Found = tuple[FastPath, dict[str, str], str] | None


def add_fast_path(
    app: web.Application, route: AbstractRoute, key_of: Keyer, answer: Answerer
) -> None:
    """`answer` for the paths of `route` (just added to the app's router), before routing."""
    if route.resource is None:
        raise ValueError(f"{route!r} has no resource")
    app.setdefault(FAST_PATHS, []).append(FastPath(route.resource, key_of, answer))


def _find(paths: tuple[FastPath, ...], request: web.BaseRequest) -> Found:
    """The first fast path whose route matches the request's path, if it makes a key for it."""
    raw_path = request.rel_url.raw_path
    for path in paths:
        values = path.match(raw_path)
        if values is None:
            continue
        key = path.key_of(request, values)
        return None if key is None else (path, values, key)
    return None


def with_fast_paths(app: web.Application, handler: RequestHandler) -> RequestHandler:
    """`handler` (the application's own request handler) behind `app`'s fast paths, if any."""
    registered: list[FastPath] = app.get(FAST_PATHS, [])
    paths = tuple(registered)
    if not paths:
        return handler
    requests = app[METRICS].requests
    # what `_find` said of each request target seen: matching the routes' patterns, reading the
    # query and making the key are the same work for every repeat of a target
    known: dict[str, Found] = {}

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.method == hdrs.METH_GET and not request.body_exists:
            started = time.perf_counter()
            if hdrs.EXPECT not in request.headers:
                target = request.raw_path
                try:
                    found = known[target]
                except KeyError:
                    found = _find(paths, request)
                    if len(known) >= KNOWN_TARGETS:
                        known.clear()
                    known[target] = found
                if found is not None:
                    path, values, key = found
                    response = path.answer(request, values, key)
                    if response is not None:
                        open_request(request)  # the middleware's contract, as routed requests
                        close_request(requests, request, response, started, path.resource)
                        return response
        return await handler(request)

    return handle
