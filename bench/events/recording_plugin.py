"""The plugin both event benchmarks call: a grpc.aio server recording each OnEvent's first arrival
and how many calls each event id got.

`bench.py` (the pipeline) and `grpc_ceiling.py` (bare OnEvent calls) compare their figures, so
their plugin is one code: the same handlers, serializers and server options. Before, the
benchmark's plugin was its own copy (lifecycle RPCs, a per-id call count, a lambda serializer) and
the ceiling's a cheaper one, so part of the gap between them was the plugins, not the gateway.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import grpc
from plugin.v1 import plugin_pb2

SERVICE = "plugin.v1.PluginService"


class RecordingPlugin:
    """Answers the lifecycle RPCs and OnEvent (handled), recording each event id's first
    arrival (`arrivals`, time.time()) and its calls (`calls_by_id`)."""

    def __init__(self, subscribed_events: list[str] | None = None) -> None:
        self.arrivals: dict[str, float] = {}
        self.calls = 0
        self.calls_by_id: Counter[str] = Counter()
        self.server: grpc.aio.Server | None = None
        self.port = 0
        self._manifest = plugin_pb2.PluginManifest(
            name="recorder", version="1.0.0", subscribed_events=subscribed_events or []
        )

    async def on_event(self, request: Any, context: Any) -> Any:
        now = time.time()
        self.calls += 1
        for key, value in context.invocation_metadata() or ():
            if key == "x-event-id":
                self.arrivals.setdefault(value, now)
                self.calls_by_id[value] += 1
        return plugin_pb2.EventResponse(handled=True)

    async def initialize(self, request: Any, context: Any) -> Any:
        return plugin_pb2.InitializeResponse(success=True, protocol_version=1)

    async def get_manifest(self, request: Any, context: Any) -> Any:
        return self._manifest

    async def health(self, request: Any, context: Any) -> Any:
        return plugin_pb2.HealthCheckResponse(healthy=True, status="SERVING")

    async def shutdown(self, request: Any, context: Any) -> Any:
        return plugin_pb2.ShutdownResponse(success=True)

    def handler(self) -> grpc.GenericRpcHandler:
        rpcs = {
            "Initialize": (
                self.initialize,
                plugin_pb2.InitializeRequest,
                plugin_pb2.InitializeResponse,
            ),
            "GetManifest": (
                self.get_manifest,
                plugin_pb2.GetManifestRequest,
                plugin_pb2.PluginManifest,
            ),
            "HealthCheck": (
                self.health,
                plugin_pb2.HealthCheckRequest,
                plugin_pb2.HealthCheckResponse,
            ),
            "Shutdown": (self.shutdown, plugin_pb2.ShutdownRequest, plugin_pb2.ShutdownResponse),
            "OnEvent": (self.on_event, plugin_pb2.PluginEvent, plugin_pb2.EventResponse),
        }
        handlers = {
            name: grpc.unary_unary_rpc_method_handler(
                fn,
                request_deserializer=request.FromString,
                response_serializer=response.SerializeToString,
            )
            for name, (fn, request, response) in rpcs.items()
        }
        return grpc.method_handlers_generic_handler(SERVICE, handlers)

    async def start(self, port: int) -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers([self.handler()])
        self.port = server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        self.server = server

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop(0)
