"""The exchanges that keep a plugin joined: joining (Initialize, version negotiation, the
manifest) and the health check. They report what they found and change no plugin state: the
plugin records the outcome (`ManagedPlugin.record_join`, `record_health`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
from plugin.v1 import plugin_pb2

from ..options import Options
from .client import PluginCallError, PluginClient, PluginDeadline, PluginFailed, PluginUnavailable
from .models import HealthResult, Manifest
from .state import PluginState
from .versions import VersionRefused, negotiate


@dataclass(frozen=True, slots=True)
class JoinOutcome:
    """One join attempt: READY with the versions and the manifest, or the state it failed in."""

    state: PluginState
    problem: str | None = None
    reported_version: int | None = None  # None when Initialize gave no answer
    negotiated_version: int | None = None
    manifest: Manifest | None = None


async def join(client: PluginClient, options: Options, server_version: str) -> JoinOutcome:
    """Initialize, negotiate the version, read the manifest.

    The client speaks the minimum version until the plugin's is known, then the negotiated one,
    so GetManifest is checked against the version the plugin really speaks.
    """
    name = client.plugin.name
    request = plugin_pb2.InitializeRequest(
        server_version=server_version,
        config=dict(client.plugin.config),
        protocol_version=options.protocol_version,
    )
    # Initialize belongs to every version; the plugin's own version is not known yet.
    client.negotiated = options.min_protocol_version
    reported: int | None = None
    try:
        reply = await client.call("Initialize", request, plugin_pb2.InitializeResponse)
        if not reply.success:
            return JoinOutcome(PluginState.FAILED, f"Initialize: {reply.error or 'refused'}")
        reported = reply.protocol_version
        negotiated = negotiate(
            name,
            reported,
            ours=options.protocol_version,
            minimum=options.min_protocol_version,
        )
        client.negotiated = negotiated
        manifest = await _manifest(client, reply)
    except VersionRefused as refused:
        return JoinOutcome(PluginState.REFUSED, str(refused), reported)
    except (PluginUnavailable, PluginDeadline) as error:
        return JoinOutcome(PluginState.DOWN, f"{error.rpc}: {error.detail}", reported)
    except PluginCallError as error:
        return JoinOutcome(PluginState.FAILED, f"{error.rpc}: {error.detail}", reported)
    if manifest is None:
        problem = "no manifest: GetManifest is unimplemented and Initialize sent none"
        return JoinOutcome(PluginState.FAILED, problem, reported)
    return JoinOutcome(PluginState.READY, None, reported, negotiated, manifest)


async def _manifest(client: PluginClient, reply: plugin_pb2.InitializeResponse) -> Manifest | None:
    """GetManifest; a plugin without it may have sent its manifest with Initialize."""
    try:
        message = await client.call(
            "GetManifest", plugin_pb2.GetManifestRequest(), plugin_pb2.PluginManifest
        )
    except PluginFailed as error:
        if error.code is not grpc.StatusCode.UNIMPLEMENTED:
            raise
        if not reply.HasField("manifest"):
            return None
        message = reply.manifest
    return Manifest.from_proto(message, client.plugin.name)


async def check_health(
    client: PluginClient, clock: Callable[[], float] = time.monotonic
) -> tuple[HealthResult, bool]:
    """One HealthCheck with its deadline: the result, and whether the plugin was unreachable."""
    started = clock()
    healthy, status, details, problem = False, "", {}, None
    unreachable = False
    try:
        reply = await client.call(
            "HealthCheck", plugin_pb2.HealthCheckRequest(), plugin_pb2.HealthCheckResponse
        )
        healthy, status, details = reply.healthy, reply.status, dict(reply.details)
        if not healthy:
            problem = f"plugin reports unhealthy ({status or 'no status'})"
    except PluginUnavailable as error:
        problem, unreachable = error.detail, True
    except PluginFailed as error:
        if error.code is grpc.StatusCode.UNIMPLEMENTED:
            # It answered, so it is alive; a plugin without HealthCheck is not penalised.
            healthy, status = True, "UNIMPLEMENTED"
        else:
            problem = error.detail
    except PluginCallError as error:
        problem = error.detail
    result = HealthResult(
        healthy=healthy,
        checked_at=datetime.now(UTC),
        seconds=clock() - started,
        status=status,
        details=details,
        error=problem,
    )
    return result, unreachable
