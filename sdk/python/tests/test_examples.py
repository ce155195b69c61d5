"""The two example plugins, run as real processes, called by real clients."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
from pathlib import Path

import grpc
import pytest
from forge_plugin_sdk import EVENT_TYPES
from plugin.v1 import plugin_pb2, plugin_pb2_grpc

TIMEOUT = 10.0
REPO_ROOT = Path(__file__).resolve().parents[3]
ADMIN = {"X-Forge-User-Id": "1", "X-Forge-User-Login": "root", "X-Forge-User-Admin": "true"}


def _buf() -> str:
    # buf-bin (requirements-dev.txt) installs buf next to the venv's python.
    beside = Path(sys.executable).with_name("buf")
    found = str(beside) if beside.exists() else shutil.which("buf")
    if found is None:
        pytest.fail("buf is not installed: pip install buf-bin (it is in requirements-dev.txt)")
    return found


async def _buf_curl(port: int, method: str, body: str, *extra: str) -> dict[str, object]:
    process = await asyncio.create_subprocess_exec(
        _buf(),
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        *extra,
        f"http://127.0.0.1:{port}/plugin.v1.PluginService/{method}",
        "-d",
        body,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode == 0, err.decode()
    result: dict[str, object] = json.loads(out)
    return result


@pytest.mark.parametrize("schema", [(), ("--schema", "proto")], ids=["reflection", "schema"])
async def test_buf_curl_reads_the_event_recorder_manifest(recorder_child, schema):
    manifest = await _buf_curl(recorder_child.port, "GetManifest", "{}", *schema)
    assert manifest["name"] == "event-recorder"
    assert manifest["subscribedEvents"][0] == "release.created"
    assert len(manifest["subscribedEvents"]) == len(EVENT_TYPES)
    assert {"method": "GET", "path": "/events"} in [
        {k: r[k] for k in ("method", "path")} for r in manifest["routes"]
    ]


async def test_event_recorder_deduplicates_and_lists_events(recorder_child):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{recorder_child.port}") as channel:
        stub = plugin_pb2_grpc.PluginServiceStub(channel)
        init = await stub.Initialize(
            plugin_pb2.InitializeRequest(protocol_version=1, config={"max_events": "5"}),
            timeout=TIMEOUT,
        )
        assert init.success and init.protocol_version == 1
        event = plugin_pb2.PluginEvent(event_type="release.published", repo_id=12)
        event.payload.update({"tag": "v1.0.0", "release_id": 4})
        for attempt in ("1", "2"):  # the same event, redelivered
            response = await stub.OnEvent(
                event,
                metadata=(
                    ("x-event-id", "evt-1"),
                    ("x-delivery-id", "d-1"),
                    ("x-attempt", attempt),
                ),
                timeout=TIMEOUT,
            )
            assert response.handled
        listed = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/events", headers=ADMIN), timeout=TIMEOUT
        )
        assert listed.status_code == 200
        [recorded] = json.loads(listed.body)
        assert recorded["id"] == "evt-1"
        assert recorded["attempt"] == 1
        assert recorded["payload"] == {"tag": "v1.0.0", "release_id": 4}
        health = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/health"), timeout=TIMEOUT
        )
        assert json.loads(health.body) == {"status": "ok", "recorded": 1, "duplicates": 1}


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), ({"X-Forge-User-Id": "2", "X-Forge-User-Login": "bob"}, 403), (ADMIN, 200)],
    ids=["anonymous", "user", "admin"],
)
async def test_event_recorder_lists_events_to_site_admins_only(recorder_child, headers, status):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{recorder_child.port}") as channel:
        stub = plugin_pb2_grpc.PluginServiceStub(channel)
        response = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/events", headers=headers),
            timeout=TIMEOUT,
        )
    assert response.status_code == status


async def test_event_recorder_refuses_bad_config(recorder_child):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{recorder_child.port}") as channel:
        stub = plugin_pb2_grpc.PluginServiceStub(channel)
        init = await stub.Initialize(
            plugin_pb2.InitializeRequest(protocol_version=1, config={"max_events": "many"}),
            timeout=TIMEOUT,
        )
    assert not init.success
    assert "max_events" in init.error


async def test_event_recorder_stops_cleanly_on_sigterm(recorder_child):
    recorder_child.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(recorder_child.process.wait(), TIMEOUT) == 0


async def test_node_plugin_initializes_and_says_hello(node_child):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{node_child.port}") as channel:
        stub = plugin_pb2_grpc.PluginServiceStub(channel)
        init = await stub.Initialize(
            plugin_pb2.InitializeRequest(server_version="1.0.0", protocol_version=1),
            timeout=TIMEOUT,
        )
        assert init.success
        assert init.protocol_version == 1
        assert init.manifest.name == "node-hello"
        manifest = await stub.GetManifest(plugin_pb2.GetManifestRequest(), timeout=TIMEOUT)
        assert [(r.method, r.path) for r in manifest.routes] == [("GET", "/hello")]

        hello = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(
                method="GET",
                path="/hello",
                headers={"X-Forge-User-Id": "1", "X-Forge-User-Login": "alice"},
            ),
            timeout=TIMEOUT,
        )
        assert hello.status_code == 200
        assert json.loads(hello.body) == {"hello": "alice"}
        anonymous = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/hello"), timeout=TIMEOUT
        )
        assert json.loads(anonymous.body) == {"hello": "anonymous"}
        missing = await stub.HandleHTTP(
            plugin_pb2.HTTPRequest(method="GET", path="/nope"), timeout=TIMEOUT
        )
        assert missing.status_code == 404


async def test_node_plugin_health_events_and_shutdown(node_child):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{node_child.port}") as channel:
        stub = plugin_pb2_grpc.PluginServiceStub(channel)
        health = await stub.HealthCheck(plugin_pb2.HealthCheckRequest(), timeout=TIMEOUT)
        assert health.healthy
        event = plugin_pb2.PluginEvent(event_type="release.published", repo_id=3)
        event.payload.update({"tag": "v1"})
        handled = await stub.OnEvent(event, metadata=(("x-event-id", "e"),), timeout=TIMEOUT)
        assert handled.handled
        other = await stub.OnEvent(
            plugin_pb2.PluginEvent(event_type="org.pin.created"), timeout=TIMEOUT
        )
        assert not other.handled and "not subscribed" in other.error
        bye = await stub.Shutdown(plugin_pb2.ShutdownRequest(reason="test"), timeout=TIMEOUT)
        assert bye.success
