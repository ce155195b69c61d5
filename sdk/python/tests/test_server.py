"""Server lifecycle: standard health, reflection, message limits, start/stop."""

from __future__ import annotations

import grpc
import pytest
from forge_plugin_sdk import MAX_MESSAGE_BYTES, Plugin, Request
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from plugin.v1 import plugin_pb2, plugin_pb2_grpc

TIMEOUT = 10.0


@pytest.mark.parametrize("service", ["", "plugin.v1.PluginService"])
async def test_standard_health_service_answers_serving(channel, service):
    health = health_pb2_grpc.HealthStub(channel)
    response = await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT)
    assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_services(channel):
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=TIMEOUT
    )
    names = set()
    async for response in call:
        names |= {s.name for s in response.list_services_response.service}
    assert {"plugin.v1.PluginService", "grpc.health.v1.Health"} <= names


async def test_large_messages_pass_both_ways():
    plugin = Plugin("big", "1")

    @plugin.route("POST", "/echo")
    async def echo(request: Request) -> bytes:
        return request.body

    port = await plugin.start("127.0.0.1:0")
    body = b"x" * (8 * 1024 * 1024)  # twice gRPC's default 4 MiB limit
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
            stub = plugin_pb2_grpc.PluginServiceStub(channel)
            response = await stub.HandleHTTP(
                plugin_pb2.HTTPRequest(method="POST", path="/echo", body=body), timeout=TIMEOUT
            )
        assert response.body == body
    finally:
        await plugin.stop(grace=0)


async def test_start_twice_is_refused_and_stop_frees_the_port():
    plugin = Plugin("twice", "1")
    port = await plugin.start("127.0.0.1:0")
    try:
        assert port > 0
        assert plugin.port == port
        with pytest.raises(RuntimeError, match="already running"):
            await plugin.start("127.0.0.1:0")
    finally:
        await plugin.stop(grace=0)
    assert plugin.port is None
    # The port is free again, and a plugin can be restarted.
    again = await plugin.start(f"127.0.0.1:{port}")
    await plugin.stop(grace=0)
    assert again == port


async def test_a_port_in_use_is_an_error():
    first = Plugin("first", "1")
    port = await first.start("127.0.0.1:0")
    try:
        with pytest.raises(OSError, match="cannot listen"):
            await Plugin("second", "1").start(f"127.0.0.1:{port}")
    finally:
        await first.stop(grace=0)


async def test_health_is_not_serving_after_stop(sample):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{sample.plugin.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        await health.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT)
        await sample.plugin.stop(grace=0)
        with pytest.raises(grpc.aio.AioRpcError):
            await health.Check(health_pb2.HealthCheckRequest(), timeout=2)
