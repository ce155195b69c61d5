"""docs/http.md "Versioning" rule 7: version 1 holds the six RPCs of plugin.proto, and the
gateway's version table knows each of them from version 1.

Rules 2 and 8 are shown by behaviour, not constants: the gateway sends protocol_version 1
(test_lifecycle.py, test_versioning_rules_2_and_3_...) and the SDK answers 1
(sdk/python/tests/test_rpcs.py, test_versioning_rule_8_...)."""

from __future__ import annotations

from forge_gateway.plugins.versions import RPC_MIN_VERSION
from plugin.v1 import plugin_pb2

PROTO_RPCS = {"Initialize", "Shutdown", "HealthCheck", "GetManifest", "OnEvent", "HandleHTTP"}


def test_versioning_rule_7_version_1_contains_the_six_rpcs() -> None:
    service = plugin_pb2.DESCRIPTOR.services_by_name["PluginService"]
    assert {method.name for method in service.methods} == PROTO_RPCS
    assert {rpc: RPC_MIN_VERSION[rpc] for rpc in PROTO_RPCS} == dict.fromkeys(PROTO_RPCS, 1)
