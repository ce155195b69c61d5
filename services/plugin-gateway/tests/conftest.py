"""Fake plugins for the gateway tests: real grpc.aio servers in the test process on 127.0.0.1:0.

A `FakePlugin` serves plugin.v1.PluginService through generic handlers, so a test can leave an RPC
out (UNIMPLEMENTED), add one no version has (the version table), answer with any protocol version,
or make a call slow, hang or crash. Every call is counted and its request kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import faulthandler
import json
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from forge_gateway.keys import PLUGIN_MANAGER
from forge_gateway.options import BreakerOptions, DeliveryOptions, Options
from forge_gateway.plugins.plugin import ManagedPlugin
from forge_gateway.service import create_app
from forge_testing.plugin import SharedWorld, WorldDatabases
from forge_testing.ports import free_port
from forge_testing.waiting import eventually
from google.protobuf.message import Message
from plugin.v1 import plugin_pb2

from .events_support import WORLD as EVENTS_WORLD

SERVICE = "plugin.v1.PluginService"
Handler = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Message]]

# Intervals short enough for a fast suite; deadlines are set per plugin in the file.
FAST = Options(
    health_interval=0.1,
    retry_initial=0.05,
    retry_max=0.2,
    reconnect_initial=0.05,
    reconnect_max=0.2,
    startup_wait=3.0,
    breaker=BreakerOptions(open_seconds=0.3, slow_call_seconds=2.0, min_calls=3),
    delivery=DeliveryOptions(
        poll_interval=0.05,
        retry_schedule=(0.05, 0.1),
        max_attempts=3,
        released_delay=0.05,
        stop_grace=0.2,
    ),
)

_TYPES: dict[str, tuple[type[Message], type[Message]]] = {
    "Initialize": (plugin_pb2.InitializeRequest, plugin_pb2.InitializeResponse),
    "Shutdown": (plugin_pb2.ShutdownRequest, plugin_pb2.ShutdownResponse),
    "HealthCheck": (plugin_pb2.HealthCheckRequest, plugin_pb2.HealthCheckResponse),
    "GetManifest": (plugin_pb2.GetManifestRequest, plugin_pb2.PluginManifest),
    "OnEvent": (plugin_pb2.PluginEvent, plugin_pb2.EventResponse),
    "HandleHTTP": (plugin_pb2.HTTPRequest, plugin_pb2.HTTPResponse),
}


class Abort(Exception):
    """Raised by a fake's handler to answer with this gRPC status."""

    def __init__(self, code: grpc.StatusCode, details: str = "refused") -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class FakePlugin:
    """A plugin whose every answer a test can change while it runs."""

    def __init__(
        self,
        name: str = "fake",
        *,
        protocol_version: int = 1,
        routes: Iterable[tuple[str, str]] = (("GET", "/hello"),),
        events: Iterable[str] = (),
        missing: Iterable[str] = (),
        manifest_in_initialize: bool = False,
        extra: dict[str, tuple[type[Message], type[Message], Handler]] | None = None,
    ) -> None:
        self.name = name
        self.protocol_version = protocol_version
        self.manifest = plugin_pb2.PluginManifest(
            name=name,
            version="1.0.0",
            description="a fake plugin",
            subscribed_events=list(events),
            routes=[plugin_pb2.PluginRoute(method=m, path=p) for m, p in routes],
        )
        self.missing = set(missing)
        self.manifest_in_initialize = manifest_in_initialize
        self.extra = extra or {}
        self.calls: Counter[str] = Counter()
        self.requests: defaultdict[str, list[Any]] = defaultdict(list)
        self.metadata: defaultdict[str, list[dict[str, str]]] = defaultdict(list)
        # Behaviour switches.
        self.init_success = True
        self.init_error = ""
        self.healthy = True
        self.health_details: dict[str, str] = {}
        self.hang = False  # every RPC but Initialize waits forever
        self.delay = 0.0  # HandleHTTP waits this long first
        self.http: Callable[[plugin_pb2.HTTPRequest], Awaitable[plugin_pb2.HTTPResponse]] = (
            self._echo
        )
        self.event_delay = 0.0
        self.events_in_flight = 0
        self.max_events_in_flight = 0
        self.on_event: Callable[[Any, dict[str, str]], Awaitable[plugin_pb2.EventResponse]] = (
            self._handled
        )
        self.server: grpc.aio.Server | None = None
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self, port: int = 0, credentials: grpc.ServerCredentials | None = None) -> int:
        server = grpc.aio.server(
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ]
        )
        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for rpc, (request_type, _response_type) in _TYPES.items():
            if rpc not in self.missing:
                handlers[rpc] = self._handler(rpc, request_type, getattr(self, f"_{rpc}"))
        for rpc, (request_type, _response_type, fn) in self.extra.items():
            handlers[rpc] = self._handler(rpc, request_type, fn)
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
        address = f"127.0.0.1:{port}"
        if credentials is None:
            self.port = server.add_insecure_port(address)
        else:
            self.port = server.add_secure_port(address, credentials)
        await server.start()
        self.server = server
        return self.port

    async def stop(self, grace: float | None = None) -> None:
        if self.server is not None:
            await self.server.stop(grace)
            self.server = None

    def _handler(
        self, rpc: str, request_type: type[Message], fn: Handler
    ) -> grpc.RpcMethodHandler[Any, Any]:
        async def handle(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Message:
            self.calls[rpc] += 1
            self.requests[rpc].append(request)
            self.metadata[rpc].append(dict(context.invocation_metadata() or ()))
            if self.hang and rpc != "Initialize":
                await asyncio.Event().wait()
            return await fn(request, context)

        return grpc.unary_unary_rpc_method_handler(
            handle,
            request_deserializer=request_type.FromString,
            response_serializer=lambda m: m.SerializeToString(),
        )

    async def _Initialize(self, request: Any, context: Any) -> Message:
        reply = plugin_pb2.InitializeResponse(
            success=self.init_success, error=self.init_error, protocol_version=self.protocol_version
        )
        if self.manifest_in_initialize:
            reply.manifest.CopyFrom(self.manifest)
        return reply

    async def _Shutdown(self, request: Any, context: Any) -> Message:
        return plugin_pb2.ShutdownResponse(success=True)

    async def _HealthCheck(self, request: Any, context: Any) -> Message:
        return plugin_pb2.HealthCheckResponse(
            healthy=self.healthy,
            status="SERVING" if self.healthy else "NOT_SERVING",
            details=self.health_details,
        )

    async def _GetManifest(self, request: Any, context: Any) -> Message:
        return self.manifest

    async def _OnEvent(self, request: Any, context: Any) -> Message:
        self.events_in_flight += 1
        self.max_events_in_flight = max(self.max_events_in_flight, self.events_in_flight)
        try:
            if self.event_delay:
                await asyncio.sleep(self.event_delay)
            return await self.on_event(request, dict(context.invocation_metadata() or ()))
        except Abort as abort:
            await context.abort(abort.code, abort.details)
            raise  # not reached: abort raises
        finally:
            self.events_in_flight -= 1

    async def _handled(self, request: Any, metadata: dict[str, str]) -> plugin_pb2.EventResponse:
        return plugin_pb2.EventResponse(handled=True)

    def event_ids(self) -> list[str]:
        """The x-event-id of every OnEvent received, in order."""
        return [m.get("x-event-id", "") for m in self.metadata["OnEvent"]]

    async def _HandleHTTP(self, request: Any, context: Any) -> Message:
        if self.delay:
            await asyncio.sleep(self.delay)
        return await self.http(request)

    async def _echo(self, request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        body = json.dumps(
            {
                "method": request.method,
                "path": request.path,
                "headers": dict(request.headers),
                "query": dict(request.query_params),
                "body": request.body.decode("utf-8", "replace"),
            }
        ).encode()
        return plugin_pb2.HTTPResponse(
            status_code=200, headers={"Content-Type": "application/json"}, body=body
        )


# A test here takes seconds; one that has not finished after this long is stuck. Stop the run with
# every thread's stack on stderr rather than let it hang until an outer timeout.
WATCHDOG_SECONDS = 120


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
async def fakes() -> Any:
    """`fake = await fakes(FakePlugin(...))` starts a fake plugin, stopped after the test."""
    started: list[FakePlugin] = []

    async def start(plugin: FakePlugin, port: int = 0) -> FakePlugin:
        await plugin.start(port)
        started.append(plugin)
        return plugin

    yield start
    for plugin in started:
        await plugin.stop(0)


def entry(fake: FakePlugin | str, **extra: Any) -> dict[str, Any]:
    """A PLUGINS_FILE entry for `fake` with short deadlines (tests override them in `extra`)."""
    name = fake if isinstance(fake, str) else fake.name
    address = extra.pop("address", None) or (fake.address if not isinstance(fake, str) else "")
    # Initialize has room for a loaded machine: no test waits for it to run out (a fake that
    # answers, answers at once), and one that ran out in 1 s left the plugin down, not failed.
    timeouts = {"HealthCheck": 0.5, "HandleHTTP": 1.0, "Initialize": 10.0, "Shutdown": 0.5}
    timeouts.update(extra.pop("timeouts", {}))
    return {"name": name, "address": address, "config": {}, "timeouts": timeouts, **extra}


# The gateway tests only read accounts and tokens, so they share one database (and one world)
# for the whole run instead of cloning one per test.
WORLD = {
    "users": [
        {"name": "alice", "tokens": ["alice-token"]},
        {"name": "root", "admin": True, "tokens": ["root-token"]},
    ]
}


@pytest.fixture(scope="session")
def gateway_world(world_databases: WorldDatabases) -> SharedWorld:
    """The shared database with alice and the site admin root (its settings and ids)."""
    return world_databases.create(WORLD)


@pytest.fixture
def gateway(aiohttp_client: Any, gateway_world: SharedWorld, tmp_path: Path) -> Any:
    """`client = await gateway([entry(...)], options)`: the gateway app with these plugins."""

    async def make(plugins: list[dict[str, Any]], options: Options = FAST) -> Any:
        path = tmp_path / "plugins.json"
        path.write_text(json.dumps({"plugins": plugins}))
        settings = dataclasses.replace(
            gateway_world.settings, storage_path=tmp_path / "storage", plugins_file=path
        )
        return await aiohttp_client(create_app(settings, options))

    return make


def managed(client: Any, name: str) -> ManagedPlugin:
    plugin = client.app[PLUGIN_MANAGER].get(name)
    assert plugin is not None
    return plugin


@pytest.fixture
def helpers() -> Any:
    """The module's helpers, for test modules (conftest cannot be imported under importlib)."""
    return _Helpers()


class _Helpers:
    Abort = Abort
    FakePlugin = FakePlugin
    FAST = FAST
    entry = staticmethod(entry)
    eventually = staticmethod(eventually)
    free_port = staticmethod(free_port)
    managed = staticmethod(managed)


@pytest.fixture
def fresh(aiohttp_client: Any, settings: Any, tmp_path: Path, load: Any, helpers: Any) -> Any:
    """`client = await fresh([entry(...)], options)`: a gateway on a fresh database."""

    async def make(plugins: list[dict[str, Any]], options: Options | None = None) -> Any:
        await load(EVENTS_WORLD)
        path = tmp_path / "plugins.json"
        path.write_text(json.dumps({"plugins": plugins}))
        app = create_app(dataclasses.replace(settings, plugins_file=path), options or helpers.FAST)
        return await aiohttp_client(app)

    return make
