"""Serving an application the way `forge serve` does: our own aiohttp runner.

aiohttp answers some requests before any handler (or our middleware) runs: what its HTTP parser
refuses (bad bytes in the request line or headers, a header line over 8,190 bytes, folded
headers) and a refused `Expect` header. Its own answers are text/plain without a request id, and
it logs the refusal as an ERROR with the raw header, credentials included. aiohttp has no public
hook for either, so this module subclasses the three classes that build a connection:

    ForgeRunner (web.AppRunner)    its `_make_server` returns a ForgeServer
    ForgeServer (web.Server)       its `__call__` builds a ForgeRequestHandler per connection;
                                   it offers requests to the app's fast paths first (fast_path.py)
    ForgeRequestHandler            `handle_error` (parser refusals) and `finish_response` (an
                                   HTTP error that escaped the application: the expect handler)
                                   render our JSON error body with a request id; a deadline on
                                   each request head (aiohttp has none: docs/http.md "Slow
                                   clients"); aiohttp's own keep-alive limit bounds idle ones

`serve()` runs an application until SIGTERM or SIGINT, then stops gracefully
(docs/architecture.md "Stopping").
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import signal
from collections.abc import Callable, Coroutine
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod
from aiohttp.web_protocol import RequestHandler

from .errors import ApiError, InvalidInput
from .fast_path import with_fast_paths
from .keys import SETTINGS
from .middleware import (
    REQUEST_ID,
    REQUEST_ID_HEADER,
    error_response,
    is_v1,
    request_id_of,
    stamp,
    translate_http_exception,
)

log = logging.getLogger(__name__)

# The start of the latest bytes a connection received: a refused request's path (to choose the
# version-1 or version-2 body) is read from it, since the parser hands over nothing of the request.
_HEAD_BYTES = 8192
_REQUEST_LINE = re.compile(rb"(?:^|\n)[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32} (/[^ \r\n]*)")


def refused_path(head: bytes) -> str:
    """The path of the last request line in `head`, or "/" when none can be found."""
    found = _REQUEST_LINE.findall(head)
    return found[-1].decode("latin-1") if found else "/"


class ForgeRequestHandler(RequestHandler):
    """One connection. Only the refusals differ from aiohttp's: the JSON error body, a request id,
    `nosniff`, and one log line that names the kind of refusal and never a header's value."""

    __slots__ = ("_head", "_head_deadline", "_head_timeout", "_heads_seen")

    def __init__(self, manager: Any, *, header_read_timeout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._head_timeout = header_read_timeout
        self._head_deadline: asyncio.TimerHandle | None = None
        self._heads_seen = 0

    @property
    def busy(self) -> bool:
        """A request of this connection is being handled (its body may still be arriving)."""
        return self._request_in_progress

    def data_received(self, data: bytes) -> None:
        idle = not self._request_in_progress and not self._messages
        self._receive(data)
        if self._request_count != self._heads_seen:  # a whole request head arrived
            self._heads_seen = self._request_count
            self._stop_head_deadline()
        elif idle and data and self._head_deadline is None and self._head_timeout > 0:
            # the first bytes of a request head on an idle connection: the rest must follow
            self._head_deadline = self._loop.call_later(self._head_timeout, self._head_too_slow)

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self._request_count != self._heads_seen or self._request_in_progress or self._messages:
            return  # the head arrived after all (its request is queued or being handled)
        peer = self.transport.get_extra_info("peername") if self.transport else None
        log.info(
            "closed a connection from %s: its request head did not arrive within %g s",
            peer[0] if peer else "?",
            self._head_timeout,
        )
        self.force_close()

    def _stop_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def connection_lost(self, exc: BaseException | None) -> None:
        self._stop_head_deadline()
        super().connection_lost(exc)

    def _receive(self, data: bytes) -> None:
        self._head = data  # kept, not copied: sliced only when a refusal needs its path
        if self._close and self._request_in_progress and not self._force_close:
            # aiohttp drops whatever arrives once a connection is closing; when the server stops,
            # the request in flight may still be receiving its body, and must get it.
            self._close = False
            try:
                super().data_received(data)
            finally:
                self._close = True
            return
        super().data_received(data)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        request_id = request.get(REQUEST_ID) or request_id_of("")
        error: ApiError
        if status >= 500:
            # the middleware renders every error of a handler: reaching here is a bug of ours
            log.error(
                "unhandled error serving a request",
                exc_info=exc,
                extra={"request_id": request_id},
            )
            error = ApiError("Internal server error")
            error.status = status
            path = request.path
        else:
            reason = type(exc).__name__ if exc is not None else str(status)
            first = self._request_count == 1 and isinstance(exc, BadHttpMethod)
            # not HTTP at all (TLS, a port scanner) on a new connection is noise: debug only
            (log.debug if first else log.warning)(
                "refused a malformed request from %s: %s",
                request.remote,
                reason,
                extra={"request_id": request_id},
            )
            error = InvalidInput("Malformed HTTP request") if status == 400 else _http_error(status)
            path = refused_path(getattr(self, "_head", b"")[:_HEAD_BYTES])
        if request.writer.output_size > 0:  # as aiohttp: a response has started, cannot answer
            raise ConnectionError("a response was already sent; cannot send the error")
        response = error_response(error, v1=is_v1(path), request_id=request_id)
        stamp(response.headers, request_id)
        response.force_close()
        return response

    def finish_response(  # not async: aiohttp's coroutine is returned, no extra layer a request
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> Coroutine[Any, Any, tuple[web.StreamResponse, bool]]:
        # Every error a handler raises is rendered by the middleware; an HTTP error that still
        # arrives here escaped the application before the middleware ran: an expect handler's
        # refusal of an `Expect` header (aiohttp's default one, or a route's own).
        if isinstance(resp, web.HTTPException) and resp.status >= 400:
            request_id = request_id_of(request.headers.get(REQUEST_ID_HEADER, ""))
            rendered = error_response(
                translate_http_exception(resp), v1=is_v1(request.path), request_id=request_id
            )
            stamp(rendered.headers, request_id)
            rendered.force_close()  # the body the refused expectation announced may follow
            resp = rendered
        return super().finish_response(request, resp, start_time)


def _http_error(status: int) -> ApiError:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Error"
    error = ApiError(reason, code="HTTPError")
    error.status = status
    return error


class ForgeServer(web.Server):
    """aiohttp's low-level server, building our connection handler."""

    def __call__(self) -> RequestHandler:
        return ForgeRequestHandler(self, loop=self._loop, **self._kwargs)


class ForgeRunner(web.AppRunner):
    """`web.AppRunner` serving through ForgeServer; start sites on it as on aiohttp's."""

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()  # starts the application
        kwargs: dict[str, Any] = dict(server._kwargs)
        settings = self.app.get(SETTINGS)
        if settings is not None:  # docs/http.md "Slow clients"
            kwargs.setdefault("header_read_timeout", settings.header_read_timeout)
            kwargs.setdefault("keepalive_timeout", settings.keepalive_timeout)
        return ForgeServer(
            with_fast_paths(self.app, server.request_handler),
            request_factory=server.request_factory,
            handler_cancellation=server.handler_cancellation,
            loop=asyncio.get_running_loop(),
            **kwargs,
        )


async def serve(
    app: web.Application,
    host: str,
    port: int,
    *,
    shutdown_timeout: float,
    on_started: Callable[[], None] | None = None,
) -> None:
    """Serve `app` until SIGTERM or SIGINT, then stop gracefully:

    1. stop accepting: the listening socket closes, idle keep-alive connections are closed, busy
       ones close after their response;
    2. requests in flight finish, for at most `shutdown_timeout` seconds (then are cancelled);
    3. the application's cleanup contexts run (download counts flushed, plugins shut down,
       the pool closed), and the function returns.

    A second signal while stopping takes the default action (the process ends at once)."""
    # aiohttp's own wait (runner.cleanup) force-closes connections first, dropping the rest of a
    # body still arriving: `_finish_in_flight` waits instead, and aiohttp's wait is left with the
    # requests still running after the bound, which it cancels.
    runner = ForgeRunner(app, access_log=None, shutdown_timeout=_CANCELLED_GRACE)
    await runner.setup()
    _tune_garbage_collection()
    try:
        await web.TCPSite(runner, host, port).start()
        if on_started is not None:
            on_started()
        signalled = await _until_signalled()
        log.info(
            "stopping on %s: finishing the requests in flight (at most %g s)",
            signalled,
            shutdown_timeout,
        )
        await _finish_in_flight(runner, shutdown_timeout)
    finally:
        await runner.cleanup()


_CANCELLED_GRACE = 2.0  # seconds a request cancelled after the bound gets to unwind


# CPython collects its youngest generation after 700 more container objects were allocated than
# freed. A gateway delivering a few thousand events a second allocates that many in well under a
# millisecond (a task, a message, metadata, an outcome per call), so it collected ~120 times a
# second and spent about a second in collections per 90,000 events; after 20,000, ten times less,
# as most of those objects are freed by their last reference before a collection looks at them
# (docs/decisions.md "Garbage collection").
YOUNG_COLLECTION_THRESHOLD = 20_000


def _tune_garbage_collection() -> None:
    """Move what startup built (modules, routes, caches' structures, the pool) out of the garbage
    collector's view: its full collections otherwise walk every one of those objects again and
    again while requests allocate, which showed as CPU per request in the update check
    (bench/RESULTS.md). Objects created afterwards are collected as usual, the youngest after
    YOUNG_COLLECTION_THRESHOLD allocations."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


async def _finish_in_flight(runner: web.BaseRunner, bound: float) -> None:
    """Stop accepting; close idle connections now and busy ones after their response; wait until
    no request is in flight, or `bound` seconds."""
    for site in list(runner.sites):
        await site.stop()  # the listening socket closes: new connections are refused
    server = runner.server
    if server is None:
        return
    for connection in server.connections:
        connection.close()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    while loop.time() < deadline:
        busy = sum(1 for c in server.connections if isinstance(c, ForgeRequestHandler) and c.busy)
        if not busy:
            return
        await asyncio.sleep(0.05)
    log.warning("stopping: requests still in flight after %g s are cancelled", bound)


async def _until_signalled() -> str:
    loop = asyncio.get_running_loop()
    received: asyncio.Future[str] = loop.create_future()

    def stop(name: str) -> None:
        if not received.done():
            received.set_result(name)

    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop, sig.name)
    try:
        return await received
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
