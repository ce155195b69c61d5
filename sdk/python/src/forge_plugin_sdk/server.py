"""The grpc.aio server a plugin runs: PluginService, standard health, reflection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc  # type: ignore[import-untyped]
from grpc_reflection.v1alpha import reflection  # type: ignore[import-untyped]
from plugin.v1 import plugin_pb2, plugin_pb2_grpc, release_health_pb2, release_health_pb2_grpc

from .health import ReleaseHealthServicer

#: Largest message either side accepts. gRPC's 4 MiB default breaks HTTP
#: bodies and large payloads; the gateway uses the same limit.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024

PLUGIN_SERVICE = plugin_pb2.DESCRIPTOR.services_by_name["PluginService"].full_name
RELEASE_HEALTH_SERVICE = release_health_pb2.DESCRIPTOR.services_by_name[
    "ReleaseHealthService"
].full_name
HEALTH_SERVICE: str = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name

SERVER_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    # grpc enables SO_REUSEPORT by default, which lets a second plugin bind
    # the same port silently and steal half the calls: fail loudly instead.
    ("grpc.so_reuseport", 0),
    # By default a Python server answers client keepalive pings sent more
    # often than every 5 minutes with GOAWAY "too_many_pings": accept pings
    # every 10 s or more, with or without calls in flight, so a gateway that
    # enables keepalive is not disconnected.
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
]


@dataclass(slots=True)
class RunningServer:
    """A started server, its health servicer and the port it bound."""

    server: grpc.aio.Server
    health: Any  # grpc_health.v1.health.aio.HealthServicer (untyped package)
    port: int


async def start_server(
    servicer: plugin_pb2_grpc.PluginServiceServicer,
    address: str,
    optional: tuple[ReleaseHealthServicer, ...] = (),
) -> RunningServer:
    """Bind ``address`` (``host:port``, port 0 for any, or ``unix:PATH``) and start serving
    PluginService, and the optional services the plugin declared."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    plugin_pb2_grpc.add_PluginServiceServicer_to_server(servicer, server)
    names = [PLUGIN_SERVICE]
    for extra in optional:
        release_health_pb2_grpc.add_ReleaseHealthServiceServicer_to_server(extra, server)
        names.append(RELEASE_HEALTH_SERVICE)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*names, HEALTH_SERVICE, reflection.SERVICE_NAME), server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpc reports a failed bind this way
        raise OSError(f"cannot listen on {address}: {exc}") from exc
    await server.start()
    serving = health_pb2.HealthCheckResponse.SERVING
    await health_servicer.set("", serving)
    await health_servicer.set(PLUGIN_SERVICE, serving)
    return RunningServer(server=server, health=health_servicer, port=port)


async def stop_server(running: RunningServer, grace: float) -> None:
    """Report NOT_SERVING, then let in-flight calls finish for up to ``grace`` seconds."""
    await running.health.enter_graceful_shutdown()
    await running.server.stop(grace)
