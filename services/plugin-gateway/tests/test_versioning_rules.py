"""docs/http.md "Versioning" rules 2, 7 and 8: the protocol's current and only version is 1, it
holds the six RPCs of the spec, the gateway's version table knows each of them from version 1, and
the SDK answers version 1."""

from __future__ import annotations

from forge_gateway.plugins.versions import MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, RPC_MIN_VERSION
from forge_plugin_sdk import PROTOCOL_VERSION as SDK_PROTOCOL_VERSION
from plugin.v1 import plugin_pb2

SPEC_RPCS = {"Initialize", "Shutdown", "HealthCheck", "GetManifest", "OnEvent", "HandleHTTP"}


def test_versioning_rule_2_the_current_and_only_version_is_1() -> None:
    assert PROTOCOL_VERSION == MIN_PROTOCOL_VERSION == 1


def test_versioning_rule_7_version_1_contains_the_six_rpcs() -> None:
    service = plugin_pb2.DESCRIPTOR.services_by_name["PluginService"]
    assert {method.name for method in service.methods} == SPEC_RPCS
    assert {rpc: RPC_MIN_VERSION[rpc] for rpc in SPEC_RPCS} == dict.fromkeys(SPEC_RPCS, 1)


def test_versioning_rule_8_plugins_built_on_the_sdk_return_version_1() -> None:
    assert SDK_PROTOCOL_VERSION == 1
