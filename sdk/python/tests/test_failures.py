"""Failures are answered in-band and never take the server down."""

from __future__ import annotations

import logging

from plugin.v1 import plugin_pb2

TIMEOUT = 10.0


async def test_unsubscribed_event_is_not_handled(stub, sample):
    response = await stub.OnEvent(
        plugin_pb2.PluginEvent(event_type="org.member.concealed"), timeout=TIMEOUT
    )
    assert not response.handled
    assert "not subscribed" in response.error
    assert "org.member.concealed" in response.error
    assert sample.events == []


async def test_handler_exception_is_generic_logged_and_server_keeps_serving(stub, sample, caplog):
    with caplog.at_level(logging.ERROR, logger="forge_plugin_sdk"):
        response = await stub.OnEvent(
            plugin_pb2.PluginEvent(event_type="release.deleted"),
            metadata=(("x-event-id", "e-crash"),),
            timeout=TIMEOUT,
        )
    assert not response.handled
    assert response.error == "internal error in the plugin's event handler"
    assert "hunter2" not in response.error
    assert any("e-crash" in r.getMessage() and r.exc_info for r in caplog.records)
    # The same server still answers, on the same channel.
    after = await stub.OnEvent(
        plugin_pb2.PluginEvent(event_type="release.published"), timeout=TIMEOUT
    )
    assert after.handled
    health = await stub.HealthCheck(plugin_pb2.HealthCheckRequest(), timeout=TIMEOUT)
    assert health.healthy


async def test_plugin_error_reports_its_message(stub):
    response = await stub.OnEvent(
        plugin_pb2.PluginEvent(event_type="release.updated"), timeout=TIMEOUT
    )
    assert not response.handled
    assert response.error == "storage is full, retry later"


async def test_undeclared_route_is_404(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="GET", path="/nope"), timeout=TIMEOUT
    )
    assert response.status_code == 404
    assert response.body == b'{"message":"not found"}'


async def test_declared_path_with_another_method_is_405_with_allow(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="DELETE", path="/echo"), timeout=TIMEOUT
    )
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST"


async def test_route_exception_is_a_generic_500_and_server_keeps_serving(stub, caplog):
    with caplog.at_level(logging.ERROR, logger="forge_plugin_sdk"):
        response = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/boom"), timeout=TIMEOUT
        )
    assert response.status_code == 500
    assert b"secret" not in response.body
    assert any(r.exc_info for r in caplog.records)
    ok = await stub.HandleHTTP(plugin_pb2.HTTPRequest(method="GET", path="/bytes"), timeout=TIMEOUT)
    assert ok.status_code == 200


async def test_http_error_sets_status_and_message(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="GET", path="/teapot"), timeout=TIMEOUT
    )
    assert response.status_code == 418
    assert response.body == b'{"message":"short and stout"}'
