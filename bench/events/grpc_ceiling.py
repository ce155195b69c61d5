"""The bare gRPC ceiling of event delivery on this machine: unary OnEvent calls from a grpc.aio
client to a grpc.aio plugin server in another process, nothing else (no database, no gateway).

One OnEvent per delivery is the protocol (SPEC "Plugin protocol": version 1, events through the
unary OnEvent), so calls/s here bound what the whole pipeline (bench/events/bench.py: outbox,
relay, gateway, OnEvent) can deliver to one Python plugin on the same CPUs. The client builds each
message with the gateway's own `to_plugin_event` and sends the gateway's three metadata entries;
the server is the benchmark's recording plugin (recording_plugin.py), the same code.

    .venv/bin/python bench/events/grpc_ceiling.py [--seconds 8] [--in-flight 16,64] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import grpc
import uvloop
from forge_common.embedded_pg import free_port
from forge_gateway.events.models import to_plugin_event
from forge_testing.processes import cpu_seconds
from plugin.v1 import plugin_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import Report, fail, parse_args, stop
from recording_plugin import SERVICE, RecordingPlugin

PAYLOAD = {
    "release": {"id": 1, "tag": "v1.0.0", "name": "v1.0.0", "draft": False, "prerelease": False},
    "repository": {"id": 1, "owner": "bench", "name": "app"},
}
FULL = {"seconds": 8.0, "in_flight": "16,64"}
SMOKE = {"seconds": 1.0, "in_flight": "16"}


async def serve(port: int) -> None:
    plugin = RecordingPlugin()
    await plugin.start(port)
    assert plugin.server is not None
    await plugin.server.wait_for_termination()


async def call_for(port: int, seconds: float, in_flight: int) -> tuple[int, float, float]:
    """(calls answered, seconds, client CPU seconds) of `in_flight` callers for `seconds`."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        on_event = channel.unary_unary(
            f"/{SERVICE}/OnEvent",
            request_serializer=plugin_pb2.PluginEvent.SerializeToString,
            response_deserializer=plugin_pb2.EventResponse.FromString,
        )
        await channel.channel_ready()
        done = 0
        until = time.monotonic() + seconds

        async def caller() -> None:
            nonlocal done
            while time.monotonic() < until:
                message = to_plugin_event("release.published", PAYLOAD, datetime.now(UTC), 1, None)
                metadata = (
                    ("x-event-id", str(uuid.uuid4())),
                    ("x-delivery-id", str(done)),
                    ("x-attempt", "1"),
                )
                reply = await on_event(message, timeout=10, metadata=metadata)
                if not reply.handled:
                    fail("the plugin did not handle an event")
                done += 1

        started, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(caller() for _ in range(in_flight)))
        return done, time.monotonic() - started, time.process_time() - cpu


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        uvloop.run(serve(int(sys.argv[2])))
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, help="length of each measurement")
    parser.add_argument("--in-flight", help="calls in flight at once, comma-separated")
    args = parse_args(parser, FULL, SMOKE)
    report = Report("bench-grpc-ceiling", args.smoke)
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        for in_flight in (int(n) for n in args.in_flight.split(",")):
            before = cpu_seconds([server.pid])
            calls, seconds, client_cpu = uvloop.run(call_for(port, args.seconds, in_flight))
            server_cpu = cpu_seconds([server.pid]) - before
            if calls == 0 or server.poll() is not None:
                fail("no OnEvent call was answered")
            report.row(
                f"in flight {in_flight:>3}: {calls / seconds:7.0f} OnEvent calls/s; CPU per call: "
                f"client {client_cpu / calls * 1e6:4.0f} us, plugin {server_cpu / calls * 1e6:4.0f}"
                f" us (both ends {(client_cpu + server_cpu) / calls * 1e6:4.0f} us)"
            )
    finally:
        stop(server)
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
