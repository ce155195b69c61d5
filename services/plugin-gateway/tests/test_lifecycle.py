"""Plugin lifecycle (docs/plugins.md; docs/http.md "Versioning"): Initialize with the
protocol version, version negotiation and refusal, manifest, health, restart, down at start,
Shutdown at stop."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from forge_gateway.plugins.client import RpcNotSupported
from forge_gateway.plugins.versions import RPC_MIN_VERSION
from plugin.v1 import plugin_pb2


async def test_versioning_rules_2_and_3_initialize_sends_version_1_config_and_server_version(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """docs/http.md "Versioning" rule 3, and rule 2 as seen on the wire: the version the gateway
    speaks, the current and only one, is 1."""
    fake = await fakes(helpers.FakePlugin("notify"))
    client = await gateway([helpers.entry(fake, config={"channel": "#ops", "retries": 3})])
    plugin = helpers.managed(client, "notify")
    assert plugin.state == "ready", plugin.error
    [request] = fake.requests["Initialize"]
    assert request.protocol_version == 1
    assert dict(request.config) == {"channel": "#ops", "retries": "3"}
    assert request.server_version  # the gateway's release, e.g. "0.1.0"
    assert fake.calls["GetManifest"] == 1
    assert plugin.manifest is not None and plugin.manifest.name == "notify"


async def test_versioning_rule_4_reported_version_is_stored_and_logged(
    gateway: Any, fakes: Any, helpers: Any, caplog: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("v1", protocol_version=1))
    with caplog.at_level(logging.INFO, logger="forge_gateway"):
        client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "v1")
    assert (plugin.reported_version, plugin.negotiated_version) == (1, 1)
    assert any(
        getattr(r, "reported_protocol_version", None) == 1 and "v1" in r.getMessage()
        for r in caplog.records
    )


async def test_versioning_rule_5_reported_version_0_is_treated_as_1(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("legacy", protocol_version=0))
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "legacy")
    assert plugin.state == "ready", plugin.error
    assert plugin.reported_version == 0
    assert plugin.negotiated_version == 1
    response = await client.get("/api/v1/plugins/legacy/hello")
    assert response.status == 200


async def test_negotiated_version_is_the_smaller_of_both(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """A plugin from the future (version 7) talks version 1 with this gateway."""
    fake = await fakes(helpers.FakePlugin("future", protocol_version=7))
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "future")
    assert (plugin.reported_version, plugin.negotiated_version) == (7, 1)


async def test_plugin_below_the_minimum_version_is_refused_naming_both_versions(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """A gateway that needs version 2 refuses a version-1 plugin and never routes to it."""
    fake = await fakes(helpers.FakePlugin("old", protocol_version=1))
    options = replace(helpers.FAST, protocol_version=2, min_protocol_version=2)
    client = await gateway([helpers.entry(fake)], options)
    plugin = helpers.managed(client, "old")
    assert plugin.state == "refused"
    assert "version 1" in plugin.error and "at least version 2" in plugin.error
    assert "upgrade the plugin" in plugin.error
    response = await client.get("/api/v1/plugins/old/hello")
    assert response.status == 503
    assert fake.calls["HandleHTTP"] == 0 and fake.calls["GetManifest"] == 0


async def test_versioning_rule_6_rpc_of_version_2_is_never_called_on_a_version_1_plugin(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """The table says Frobnicate exists from version 2; a gateway speaking 2 sees a plugin that
    reports 1, so the call is refused before anything is sent, while a version-2 plugin gets it."""

    async def frobnicate(request: Any, context: Any) -> plugin_pb2.HealthCheckResponse:
        return plugin_pb2.HealthCheckResponse(healthy=True, status="frobnicated")

    extra = {
        "Frobnicate": (plugin_pb2.HealthCheckRequest, plugin_pb2.HealthCheckResponse, frobnicate)
    }
    v1 = await fakes(helpers.FakePlugin("v1", protocol_version=1, extra=extra))
    v2 = await fakes(helpers.FakePlugin("v2", protocol_version=2, extra=extra))
    table = {**RPC_MIN_VERSION, "Frobnicate": 2}
    options = replace(helpers.FAST, protocol_version=2, rpc_versions=table)
    client = await gateway([helpers.entry(v1), helpers.entry(v2)], options)
    old, new = helpers.managed(client, "v1"), helpers.managed(client, "v2")
    assert (old.negotiated_version, new.negotiated_version) == (1, 2)
    request = plugin_pb2.HealthCheckRequest()
    try:
        await old.call("Frobnicate", request, plugin_pb2.HealthCheckResponse)
    except RpcNotSupported as refused:
        assert "needs protocol version 2" in refused.detail
    else:
        raise AssertionError("a version-2 RPC was allowed on a version-1 plugin")
    assert v1.calls["Frobnicate"] == 0
    reply = await new.call("Frobnicate", request, plugin_pb2.HealthCheckResponse)
    assert reply.status == "frobnicated" and v2.calls["Frobnicate"] == 1


async def test_initialize_refusal_marks_the_plugin_failed_with_its_reason(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("picky")
    fake.init_success, fake.init_error = False, "missing setting api_key"
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "picky")
    assert plugin.state == "failed"
    assert plugin.error == "Initialize: missing setting api_key"
    response = await client.get("/api/v1/plugins/picky/hello")
    assert response.status == 503 and "missing setting" not in await response.text()
    # Fixed on the plugin's side: the supervisor's next attempt joins it.
    fake.init_success = True
    await helpers.eventually(lambda: plugin.state == "ready", what="a retry of Initialize")


async def test_manifest_from_initialize_when_get_manifest_is_unimplemented(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(
        helpers.FakePlugin("compact", missing={"GetManifest"}, manifest_in_initialize=True)
    )
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "compact")
    assert plugin.state == "ready", plugin.error
    assert (await client.get("/api/v1/plugins/compact/hello")).status == 200


async def test_plugin_without_any_manifest_is_failed(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("blank", missing={"GetManifest"}))
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "blank")
    assert plugin.state == "failed" and "no manifest" in plugin.error


async def test_missing_initialize_rpc_is_failed_not_fatal(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("half", missing={"Initialize"}))
    good = await fakes(helpers.FakePlugin("good"))
    client = await gateway([helpers.entry(fake), helpers.entry(good)])
    assert helpers.managed(client, "half").state == "failed"
    assert "UNIMPLEMENTED" in helpers.managed(client, "half").error
    assert (await client.get("/api/v1/plugins/good/hello")).status == 200


async def test_plugin_down_at_start_does_not_stop_the_gateway_and_joins_later(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    port = helpers.free_port()
    fake = helpers.FakePlugin("late")
    client = await gateway([helpers.entry("late", address=f"127.0.0.1:{port}")])
    plugin = helpers.managed(client, "late")
    assert plugin.state == "down"
    assert (await client.get("/healthz")).status == 200
    response = await client.get("/api/v1/plugins/late/hello")
    assert response.status == 503
    assert int(response.headers["Retry-After"]) >= 1
    await fakes(fake, port)
    await helpers.eventually(lambda: plugin.state == "ready", what="the late plugin to join")
    assert fake.calls["Initialize"] == 1
    assert (await client.get("/api/v1/plugins/late/hello")).status == 200


async def test_restarted_plugin_is_initialized_again(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    first = await fakes(helpers.FakePlugin("phoenix"))
    client = await gateway([helpers.entry(first)])
    plugin = helpers.managed(client, "phoenix")
    assert plugin.initialize_count == 1
    port = first.port
    await first.stop(0)
    # The new process may be another build: it must be initialized and asked for its manifest.
    second = helpers.FakePlugin("phoenix", routes=[("GET", "/hello"), ("POST", "/new")])
    await fakes(second, port)
    await helpers.eventually(lambda: second.calls["Initialize"] == 1, what="Initialize again")
    await helpers.eventually(lambda: plugin.state == "ready")
    assert plugin.initialize_count == 2
    response = await client.post("/api/v1/plugins/phoenix/new")
    assert response.status == 200
    assert second.calls["HandleHTTP"] == 1


async def test_plugin_that_forgot_its_initialization_is_initialized_again(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """Behind a proxy the connection may survive a restart; the plugin's health says so."""
    fake = await fakes(helpers.FakePlugin("amnesiac"))
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "amnesiac")
    fake.health_details = {"initialized": "false"}
    await helpers.eventually(lambda: fake.calls["Initialize"] >= 2, what="Initialize again")
    fake.health_details = {"initialized": "true"}
    await helpers.eventually(lambda: plugin.state == "ready")


async def test_plugin_reporting_another_instance_is_initialized_again(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("replica"))
    fake.health_details = {"instance": "pod-a"}
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "replica")
    await helpers.eventually(lambda: fake.calls["HealthCheck"] >= 2, what="health checks")
    assert fake.calls["Initialize"] == 1  # the same instance: nothing to do
    fake.health_details = {"instance": "pod-b"}  # e.g. a new pod behind the same address
    await helpers.eventually(lambda: fake.calls["Initialize"] == 2, what="Initialize again")
    await helpers.eventually(lambda: plugin.state == "ready")


async def test_health_is_checked_on_an_interval_and_unhealthy_plugin_gets_503(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("moody"))
    client = await gateway([helpers.entry(fake)])
    plugin = helpers.managed(client, "moody")
    await helpers.eventually(lambda: fake.calls["HealthCheck"] >= 2, what="health checks")
    assert plugin.health is not None and plugin.health.healthy
    fake.healthy = False
    await helpers.eventually(lambda: plugin.state == "unhealthy", what="unhealthy")
    assert plugin.breaker.state.value in {"open", "half_open"}
    response = await client.get("/api/v1/plugins/moody/hello")
    assert response.status == 503 and "Retry-After" in response.headers
    assert fake.calls["HandleHTTP"] == 0
    # Healthy again: a probe closes the circuit and the plugin is initialized again.
    fake.healthy = True
    await helpers.eventually(lambda: plugin.state == "ready" and plugin.breaker.allows_calls())
    assert fake.calls["Initialize"] == 2
    assert (await client.get("/api/v1/plugins/moody/hello")).status == 200


async def test_hung_plugin_is_detected_by_the_health_deadline(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """A stopped (hung) plugin answers nothing: the deadline-bound health check opens the
    circuit, after which callers get 503 at once instead of waiting for the deadline."""
    fake = await fakes(helpers.FakePlugin("frozen"))
    client = await gateway([helpers.entry(fake, timeouts={"HealthCheck": 0.2})])
    plugin = helpers.managed(client, "frozen")
    fake.hang = True
    await helpers.eventually(lambda: plugin.state == "unhealthy", what="hang detected")
    assert "no answer within 0.2 s" in (plugin.health.error or "")
    started = asyncio.get_running_loop().time()
    response = await client.get("/api/v1/plugins/frozen/hello")
    assert response.status == 503
    assert asyncio.get_running_loop().time() - started < 0.5
    assert fake.calls["HandleHTTP"] == 0


async def test_shutdown_is_sent_with_a_deadline_when_the_gateway_stops(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("polite"))
    frozen = await fakes(helpers.FakePlugin("frozen"))
    client = await gateway([helpers.entry(fake), helpers.entry(frozen, timeouts={"Shutdown": 0.2})])
    frozen.hang = True
    started = asyncio.get_running_loop().time()
    await client.close()
    assert asyncio.get_running_loop().time() - started < 2.0  # the hung plugin did not block
    [request] = fake.requests["Shutdown"]
    assert request.reason == "server shutdown"
    assert frozen.calls["Shutdown"] == 1
    assert helpers.managed(client, "polite").state == "stopped"


async def test_disabled_plugin_is_never_called(gateway: Any, fakes: Any, helpers: Any) -> None:
    fake = await fakes(helpers.FakePlugin("off"))
    client = await gateway([helpers.entry(fake, enabled=False)])
    assert helpers.managed(client, "off").state == "disabled"
    assert (await client.get("/api/v1/plugins/off/hello")).status == 404
    await client.close()
    assert sum(fake.calls.values()) == 0


async def test_a_plugin_back_from_down_joins_well_before_its_backoff_ends(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    """docs/plugins.md "Lifecycle and states": while a plugin is unreachable the supervisor backs
    off (here 5 s a try) but watches the channel, and joins as soon as the plugin is back."""
    port = helpers.free_port()
    slow_retries = replace(helpers.FAST, retry_initial=5.0, retry_max=5.0, startup_wait=0.5)
    client = await gateway([helpers.entry("late", address=f"127.0.0.1:{port}")], slow_retries)
    plugin = helpers.managed(client, "late")
    await helpers.eventually(lambda: plugin.state == "down", what="down")
    await asyncio.sleep(0.3)  # well into the 5 s backoff
    await fakes(helpers.FakePlugin("late"), port)
    await helpers.eventually(lambda: plugin.state == "ready", within=2, what="joined")
