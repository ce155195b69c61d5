"""Protocol versions (docs/http.md "Versioning"; plugin.proto "Versioning").

The gateway speaks `PROTOCOL_VERSION`; a plugin reports its own in InitializeResponse, where 0
(a plugin that predates versioning) means 1. The negotiated version is the smaller of the two.
`RPC_MIN_VERSION` records the version that introduced every RPC: the gateway checks it before
every call and never probes a plugin by calling an RPC it may lack.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

PROTOCOL_VERSION = 1
MIN_PROTOCOL_VERSION = 1

# Version 1 is the only version; it contains the six RPCs (docs/http.md "Versioning" 7).
RPC_MIN_VERSION: Mapping[str, int] = MappingProxyType(
    {
        "Initialize": 1,
        "Shutdown": 1,
        "HealthCheck": 1,
        "GetManifest": 1,
        "OnEvent": 1,
        "HandleHTTP": 1,
    }
)


class VersionRefused(Exception):
    """The plugin speaks a protocol older than the gateway accepts."""


def effective_version(reported: int) -> int:
    """The plugin's version as the gateway counts it: 0 (predates versioning) is 1."""
    return 1 if reported == 0 else reported


def negotiate(
    plugin: str, reported: int, *, ours: int = PROTOCOL_VERSION, minimum: int = MIN_PROTOCOL_VERSION
) -> int:
    """The version both sides speak, or VersionRefused naming both versions and the fix."""
    theirs = effective_version(reported)
    if theirs < minimum:
        raise VersionRefused(
            f"plugin {plugin} speaks plugin protocol version {theirs}, but this gateway "
            f"(protocol version {ours}) needs at least version {minimum}: upgrade the plugin "
            f"to a build that reports protocol_version >= {minimum}"
        )
    return min(ours, theirs)


def supports(rpc: str, negotiated: int, table: Mapping[str, int] = RPC_MIN_VERSION) -> bool:
    """Whether `rpc` exists in protocol version `negotiated`; an RPC missing from the table
    does not exist in any version we speak."""
    needed = table.get(rpc)
    return needed is not None and negotiated >= needed
