"""The six plugin.v1 RPCs, answered by the SDK through a real grpc.aio channel."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf import struct_pb2, timestamp_pb2
from plugin.v1 import plugin_pb2

TIMEOUT = 10.0


async def test_versioning_rule_8_initialize_answers_protocol_version_1_and_stores_config(
    stub, sample
):
    """docs/http.md "Versioning" rule 8: a plugin built on the SDK answers protocol_version 1."""
    response = await stub.Initialize(
        plugin_pb2.InitializeRequest(
            server_version="1.0.0", config={"color": "blue"}, protocol_version=1
        ),
        timeout=TIMEOUT,
    )
    assert response.success
    assert response.error == ""
    assert response.protocol_version == 1
    assert response.manifest.name == "sample"
    assert dict(sample.plugin.config) == {"color": "blue"}
    assert sample.plugin.registry.server_version == "1.0.0"


async def test_initialize_from_a_server_that_predates_versioning(stub):
    response = await stub.Initialize(plugin_pb2.InitializeRequest(), timeout=TIMEOUT)
    assert response.success
    assert response.protocol_version == 1


async def test_initialize_refused_by_hook_reports_its_message(stub, sample):
    response = await stub.Initialize(
        plugin_pb2.InitializeRequest(config={"mode": "refuse"}, protocol_version=1), timeout=TIMEOUT
    )
    assert not response.success
    assert response.error == "mode 'refuse' is not supported"
    assert response.protocol_version == 1
    assert dict(sample.plugin.config) == {}


async def test_initialize_hook_crash_gives_a_generic_error(stub):
    response = await stub.Initialize(
        plugin_pb2.InitializeRequest(config={"mode": "crash"}, protocol_version=1), timeout=TIMEOUT
    )
    assert not response.success
    assert "secret" not in response.error
    assert response.error == "plugin initialization failed"


async def test_get_manifest_lists_events_routes_permissions(stub):
    manifest = await stub.GetManifest(plugin_pb2.GetManifestRequest(), timeout=TIMEOUT)
    assert manifest.name == "sample"
    assert manifest.version == "1.2.3"
    assert manifest.description == "A sample plugin"
    assert list(manifest.subscribed_events) == [
        "release.published",
        "org.pin.created",
        "release.deleted",
        "release.updated",
    ]
    routes = [(r.method, r.path) for r in manifest.routes]
    assert routes == [
        ("GET", "/echo"),
        ("POST", "/echo"),
        ("GET", "/bytes"),
        ("GET", "/boom"),
        ("GET", "/teapot"),
    ]
    assert manifest.routes[0].description == "Echoes the request"
    assert list(manifest.required_permissions) == ["repo:read"]
    assert manifest.license_tier == "community"


async def test_health_check_is_healthy_while_serving(stub):
    response = await stub.HealthCheck(plugin_pb2.HealthCheckRequest(), timeout=TIMEOUT)
    assert response.healthy
    assert response.status == "SERVING"
    assert response.details["name"] == "sample"
    assert response.details["initialized"] == "false"
    await stub.Initialize(plugin_pb2.InitializeRequest(protocol_version=1), timeout=TIMEOUT)
    response = await stub.HealthCheck(plugin_pb2.HealthCheckRequest(), timeout=TIMEOUT)
    assert response.details["initialized"] == "true"


async def test_shutdown_runs_hooks_and_keeps_serving(stub, sample):
    response = await stub.Shutdown(
        plugin_pb2.ShutdownRequest(reason="server shutdown"), timeout=TIMEOUT
    )
    assert response.success
    assert sample.shutdowns == ["server shutdown"]
    # A gateway that restarts initializes the same plugin again.
    again = await stub.Initialize(plugin_pb2.InitializeRequest(protocol_version=1), timeout=TIMEOUT)
    assert again.success


async def test_on_event_delivers_a_typed_event(stub, sample):
    payload = struct_pb2.Struct()
    payload.update({"repo_id": 12, "tag": "v1.2.0", "draft": False, "ratio": 0.5, "list": [1, "a"]})
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    response = await stub.OnEvent(
        plugin_pb2.PluginEvent(
            event_type="release.published", payload=payload, timestamp=stamp, repo_id=12, org_id=3
        ),
        metadata=(("x-event-id", "e-1"), ("x-delivery-id", "d-1"), ("x-attempt", "2")),
        timeout=TIMEOUT,
    )
    assert response.handled
    assert response.error == ""
    [event] = sample.events
    assert event.type == "release.published"
    assert event.payload == {
        "repo_id": 12,
        "tag": "v1.2.0",
        "draft": False,
        "ratio": 0.5,
        "list": [1, "a"],
    }
    assert isinstance(event.payload["repo_id"], int)
    assert event.timestamp == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert (event.repo_id, event.org_id) == (12, 3)
    assert (event.id, event.delivery_id, event.attempt) == ("e-1", "d-1", 2)


async def test_on_event_without_metadata_or_timestamp(stub, sample):
    response = await stub.OnEvent(
        plugin_pb2.PluginEvent(event_type="org.pin.created", org_id=7), timeout=TIMEOUT
    )
    assert response.handled
    [event] = sample.events
    assert event.timestamp is None
    assert (event.id, event.delivery_id, event.attempt) == ("", "", 0)
    assert event.payload == {}


async def test_handle_http_routes_to_the_declared_handler(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(
            method="GET",
            path="/echo",
            headers={"Content-Type": "text/plain", "X-Request-Id": "req-9"},
            body=b"hi",
            query_params={"q": "1"},
        ),
        timeout=TIMEOUT,
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.body.startswith(b"{")
