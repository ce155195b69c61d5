"""The upgrade check of aiohttp (constraints.txt names it beside the pin): the private parts of
aiohttp that forge_common/serving.py and the upload's `100 Continue`
(forge_releases/publish/handlers.py `_send_continue`) rely on, with the reason for each in
docs/decisions.md "Private aiohttp internals".

aiohttp may rename or drop any of these in a release without notice; forge would then fail at run
time (a refused request rendered as aiohttp's text, a body dropped while stopping, no fast path),
not at import. This test fails first: on an upgrade, read the new aiohttp's web_protocol.py,
web_server.py, web_runner.py and web_urldispatcher.py against the uses named below, adapt
serving.py, then update the pinned facts here.
"""

from __future__ import annotations

import ast
import inspect
from importlib.metadata import version

import aiohttp
from aiohttp import base_protocol, web, web_protocol, web_runner, web_server, web_urldispatcher
from forge_common import serving

# The version the facts below were read from: a new one must be reviewed, not assumed alike.
PINNED = "3.14.5"


def test_the_pinned_aiohttp_is_the_one_reviewed() -> None:
    assert aiohttp.__version__ == version("aiohttp") == PINNED, (
        "aiohttp changed: review the private parts this test pins (see its docstring)"
    )


def test_connection_handler_state_serving_reads_and_sets() -> None:
    """ForgeRequestHandler.data_received reads and flips `_close` to keep receiving a body while
    the server stops (aiohttp drops what arrives once `_close` is set); `busy` reads
    `_request_in_progress`; handle_error reads `_request_count`."""
    slots = set(web_protocol.RequestHandler.__slots__)
    assert {"_close", "_force_close", "_request_in_progress", "_request_count"} <= slots
    source = inspect.getsource(web_protocol.RequestHandler.data_received)
    assert "if self._force_close or self._close:" in source  # what the flip works around
    assert "self._request_count += 1" in source


# Every private attribute of aiohttp's connection handler serving.py reads or sets, with why.
HANDLER_PRIVATES = {
    "_close": "_receive flips it to keep receiving a body while the server stops",
    "_force_close": "_receive leaves a connection closed by force alone",
    "_request_in_progress": "`busy`, and whether a head's deadline applies",
    "_request_count": "a whole request head arrived (data_received, handle_error)",
    "_messages": "requests parsed and queued, not yet handled (a head that did arrive)",
    "_loop": "the head deadline's timer (data_received)",
}


def _private_reads_of_forge_request_handler() -> set[str]:
    """`self._x` in ForgeRequestHandler's source that it does not define itself."""
    tree = ast.parse(inspect.getsource(serving.ForgeRequestHandler))
    handler = serving.ForgeRequestHandler
    own = set(handler.__slots__) | {
        name for name in vars(handler) if name.startswith("_") and not name.startswith("__")
    }
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and node.attr not in own
    }


def test_every_private_attribute_serving_reads_is_pinned() -> None:
    """The list above is every private attribute serving.py's connection handler touches (a new
    one must be added here, with its reason), and each is still a slot of aiohttp's classes."""
    assert _private_reads_of_forge_request_handler() == set(HANDLER_PRIVATES)
    slots = set(web_protocol.RequestHandler.__slots__) | set(base_protocol.BaseProtocol.__slots__)
    assert set(HANDLER_PRIVATES) <= slots


def test_queued_requests_are_in_messages() -> None:
    """`_messages` holds the requests parsed but not yet handled: data_received appends each
    head it completes (while one is handled, or when pipelined) and the handler loop takes them
    in order; the head deadline treats a connection with one queued as having sent its head."""
    receive = inspect.getsource(web_protocol.RequestHandler.data_received)
    assert "self._messages.append((msg, payload))" in receive
    start = inspect.getsource(web_protocol.RequestHandler.start)
    assert "message, payload = self._messages.popleft()" in start
    init = inspect.getsource(base_protocol.BaseProtocol.__init__)
    assert "self._loop: asyncio.AbstractEventLoop = loop" in init


def test_connection_handler_methods_serving_overrides() -> None:
    """handle_error and finish_response keep the signatures serving.py overrides; finish_response
    stays a coroutine function (ours returns its coroutine without awaiting it)."""
    handler = web_protocol.RequestHandler
    assert list(inspect.signature(handler.handle_error).parameters) == [
        "self",
        "request",
        "status",
        "exc",
        "message",
    ]
    assert list(inspect.signature(handler.finish_response).parameters) == [
        "self",
        "request",
        "resp",
        "start_time",
    ]
    assert inspect.iscoroutinefunction(handler.finish_response)
    assert list(inspect.signature(handler.data_received).parameters) == ["self", "data"]


def test_server_parts_forge_server_rebuilds() -> None:
    """ForgeRunner._make_server rebuilds aiohttp's Server from `_kwargs`, `request_handler`,
    `request_factory` and `handler_cancellation`; ForgeServer.__call__ builds the connection
    handler as aiohttp's does, from `_loop` and `_kwargs`."""
    assert inspect.iscoroutinefunction(web_runner.AppRunner._make_server)
    init = inspect.getsource(web_server.Server.__init__)
    for part in (
        "self._kwargs = kwargs",
        "self._loop = ",
        "self.request_handler = handler",
        "self.request_factory = ",
        "self.handler_cancellation = handler_cancellation",
    ):
        assert part in init, part
    call = inspect.getsource(web_server.Server.__call__)
    assert "RequestHandler(self, loop=self._loop, **self._kwargs)" in call
    assert web.Server is web_server.Server


def test_the_hundred_continue_writer() -> None:
    """`_send_continue` writes the interim response itself and resets `output_size`, exactly as
    aiohttp's own expect handler does, so the response that follows is not taken as started."""
    source = inspect.getsource(web_urldispatcher._default_expect_handler)
    assert 'await request.writer.write(b"HTTP/1.1 100 Continue\\r\\n\\r\\n")' in source
    assert "request.writer.output_size = 0" in source
