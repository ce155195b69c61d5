"""A plugin for the event fault tests: answers the lifecycle RPCs and appends one line per OnEvent
call to a file (`<x-event-id> <type> <tag>`, flushed at once), so what it received survives its
own restarts. `--delay` keeps each call in flight that long (a gateway killed mid-delivery).

    python tests-e2e/events/recording_plugin.py --address 127.0.0.1:50051 --log events.log
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any, TextIO

import grpc
from plugin.v1 import plugin_pb2

SERVICE = "plugin.v1.PluginService"
EVENT_TYPES = ["release.created", "release.published"]


async def serve(address: str, log: TextIO, delay: float) -> None:
    manifest = plugin_pb2.PluginManifest(
        name="recorder", version="1.0.0", subscribed_events=EVENT_TYPES
    )

    async def initialize(request: Any, context: Any) -> Any:
        return plugin_pb2.InitializeResponse(success=True, protocol_version=1)

    async def get_manifest(request: Any, context: Any) -> Any:
        return manifest

    async def health(request: Any, context: Any) -> Any:
        return plugin_pb2.HealthCheckResponse(healthy=True, status="SERVING")

    async def shutdown(request: Any, context: Any) -> Any:
        return plugin_pb2.ShutdownResponse(success=True)

    async def on_event(request: Any, context: Any) -> Any:
        if delay:
            await asyncio.sleep(delay)
        metadata = dict(context.invocation_metadata() or ())
        fields = request.payload.fields
        tag = fields["tag"].string_value if "tag" in fields else ""
        log.write(f"{metadata.get('x-event-id', '')} {request.event_type} {tag}\n")
        return plugin_pb2.EventResponse(handled=True)

    rpcs = {
        "Initialize": (plugin_pb2.InitializeRequest, initialize),
        "GetManifest": (plugin_pb2.GetManifestRequest, get_manifest),
        "HealthCheck": (plugin_pb2.HealthCheckRequest, health),
        "Shutdown": (plugin_pb2.ShutdownRequest, shutdown),
        "OnEvent": (plugin_pb2.PluginEvent, on_event),
    }
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            fn,
            request_deserializer=kind.FromString,
            response_serializer=lambda m: m.SerializeToString(),
        )
        for name, (kind, fn) in rpcs.items()
    }
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])
    server.add_insecure_port(address)
    await server.start()
    print(f"recording plugin listening on {address}", flush=True)
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopped.set)
    await stopped.wait()
    await server.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.log, "a", buffering=1) as log:  # a line each, flushed
        asyncio.run(serve(args.address, log, args.delay))


if __name__ == "__main__":
    main()
