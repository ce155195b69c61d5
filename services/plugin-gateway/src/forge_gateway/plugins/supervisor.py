"""Keeping one plugin joined: Initialize with backoff, health checks, restart detection.

    connecting ─Initialize+GetManifest ok─▶ ready ◀─health ok, Initialize again─ unhealthy
        │                                    │  └──health fails (deadline, healthy=false)──▶┘
        └─unreachable──▶ down ◀─unreachable, connection lost──┘
    Initialize says no ▶ failed        version below the minimum ▶ refused

The supervisor retries Initialize with jittered backoff while the plugin is down, failed or
refused (it may be fixed or upgraded), checks health on an interval with a deadline, and
initializes again after a restart: the connection left READY, health came back after failing,
or the plugin's health details say it is no longer initialized or is another instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import grpc
from plugin.v1 import plugin_pb2

from .client import PluginCallError, PluginDeadline, PluginFailed, PluginUnavailable
from .models import HealthResult, Manifest
from .state import JOINED, PluginState
from .versions import VersionRefused, negotiate

if TYPE_CHECKING:
    from .plugin import ManagedPlugin

log = logging.getLogger(__name__)


class Supervisor:
    def __init__(self, plugin: ManagedPlugin) -> None:
        self.plugin = plugin
        self.next_join_at = 0.0
        self._wake = asyncio.Event()
        self._connection_lost = False
        self._instance: str | None = None
        self._retry_delay = plugin.options.retry_initial

    def wake(self) -> None:
        """Check the plugin now rather than at the next interval."""
        self._wake.set()

    async def run(self) -> None:
        """Supervise until cancelled."""
        await asyncio.gather(self._supervise(), self._watch_channel())

    async def _supervise(self) -> None:
        while True:
            try:
                await self._supervise_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not leave the plugin unsupervised for good
                log.exception("plugin %s: supervisor error", self.plugin.name)
                self.plugin.set_state(PluginState.DOWN, "internal error in the gateway; retrying")
                self.plugin.first_attempt.set()
                await self._back_off()

    async def _supervise_once(self) -> None:
        """One round: join if needed (backing off on failure), then wait and check health."""
        if self.plugin.state not in JOINED:
            joined = await self._join()
            self.plugin.first_attempt.set()
            if not joined:
                await self._back_off()
                return
        await self._sleep(self._health_wait())
        if self._connection_lost:
            self._connection_lost = False
            self.plugin.set_state(PluginState.DOWN, "connection lost; initializing again")
            return
        await self._check_health()

    async def _watch_channel(self) -> None:
        """A joined plugin whose connection leaves READY may have restarted: join again."""
        assert self.plugin.client is not None
        channel = self.plugin.client.channel
        state = channel.get_state()
        while True:
            await channel.wait_for_state_change(state)
            new = channel.get_state()
            ready = grpc.ChannelConnectivity.READY
            if state is ready and new is not ready and self.plugin.state in JOINED:
                self._connection_lost = True
                self._wake.set()
            state = new

    async def _join(self) -> bool:
        """Initialize, negotiate the version, read the manifest; True when ready."""
        assert self.plugin.client is not None
        request = plugin_pb2.InitializeRequest(
            server_version=self.plugin.server_version,
            config=dict(self.plugin.config.config),
            protocol_version=self.plugin.options.protocol_version,
        )
        # Initialize belongs to every version; the plugin's own version is not known yet.
        self.plugin.client.negotiated = self.plugin.options.min_protocol_version
        try:
            reply = await self.plugin.client.call(
                "Initialize", request, plugin_pb2.InitializeResponse
            )
            if not reply.success:
                return self._fail(PluginState.FAILED, f"Initialize: {reply.error or 'refused'}")
            self.plugin.reported_version = reply.protocol_version
            negotiated = negotiate(
                self.plugin.name,
                reply.protocol_version,
                ours=self.plugin.options.protocol_version,
                minimum=self.plugin.options.min_protocol_version,
            )
            self.plugin.client.negotiated = negotiated
            manifest = await self._manifest(reply)
        except VersionRefused as refused:
            self.plugin.negotiated_version = None
            return self._fail(PluginState.REFUSED, str(refused))
        except (PluginUnavailable, PluginDeadline) as error:
            return self._fail(PluginState.DOWN, f"{error.rpc}: {error.detail}")
        except PluginCallError as error:
            return self._fail(PluginState.FAILED, f"{error.rpc}: {error.detail}")
        if manifest is None:
            return self._fail(
                PluginState.FAILED,
                "no manifest: GetManifest is unimplemented and Initialize sent none",
            )
        self.plugin.negotiated_version = negotiated
        self.plugin.manifest = manifest
        if manifest.name and manifest.name != self.plugin.name:
            log.info("plugin %s calls itself %r in its manifest", self.plugin.name, manifest.name)
        self.plugin.initialize_count += 1
        self.plugin.initialized_at = datetime.now(UTC)
        self._instance = None
        self._retry_delay = self.plugin.options.retry_initial
        self.plugin.breaker.reset()
        log.info(
            "plugin %s initialized: reported protocol version %d, negotiated %d, manifest %s %s",
            self.plugin.name,
            reply.protocol_version,
            negotiated,
            manifest.name or "?",
            manifest.version or "?",
            extra={
                "plugin": self.plugin.name,
                "reported_protocol_version": reply.protocol_version,
                "negotiated_protocol_version": negotiated,
            },
        )
        self.plugin.set_state(PluginState.READY, None)
        return True

    async def _manifest(self, reply: plugin_pb2.InitializeResponse) -> Manifest | None:
        """GetManifest; a plugin without it may have sent its manifest with Initialize."""
        assert self.plugin.client is not None
        try:
            message = await self.plugin.client.call(
                "GetManifest", plugin_pb2.GetManifestRequest(), plugin_pb2.PluginManifest
            )
        except PluginFailed as error:
            if error.code is not grpc.StatusCode.UNIMPLEMENTED:
                raise
            if not reply.HasField("manifest"):
                return None
            message = reply.manifest
        return Manifest.from_proto(message, self.plugin.name)

    async def _check_health(self) -> None:
        """One HealthCheck with its deadline; its outcome feeds the breaker and the state."""
        assert self.plugin.client is not None
        started = self.plugin.clock()
        healthy, status, details, problem = False, "", {}, None
        unreachable = False
        try:
            reply = await self.plugin.client.call(
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
        self.plugin.health = HealthResult(
            healthy=healthy,
            checked_at=datetime.now(UTC),
            seconds=self.plugin.clock() - started,
            status=status,
            details=details,
            error=problem,
        )
        self.plugin.breaker.record_health(healthy=healthy)
        if not healthy:
            self.plugin.set_state(
                PluginState.DOWN if unreachable else PluginState.UNHEALTHY, problem
            )
            return
        if self._restarted(details):
            self.plugin.set_state(PluginState.DOWN, "plugin restarted; initializing again")
        elif self.plugin.state is PluginState.UNHEALTHY:
            # Healthy again after failing: it may have restarted meanwhile, so initialize again.
            self.plugin.set_state(PluginState.DOWN, "healthy again; initializing again")

    def _restarted(self, details: dict[str, str]) -> bool:
        """The plugin forgot its initialization or is a new instance (details are optional)."""
        if details.get("initialized") == "false":
            return True
        instance = details.get("instance") or details.get("instance_id")
        if instance is None:
            return False
        changed = self._instance is not None and instance != self._instance
        self._instance = instance
        return changed

    def _fail(self, state: PluginState, problem: str) -> bool:
        self.plugin.set_state(state, problem)
        return False

    async def _back_off(self) -> None:
        delay = self._retry_delay * random.uniform(0.8, 1.2)  # jitter: replicas do not align
        self._retry_delay = min(self._retry_delay * 2, self.plugin.options.retry_max)
        self.next_join_at = self.plugin.clock() + delay
        await self._sleep(delay)

    def _health_wait(self) -> float:
        if not self.plugin.breaker.allows_calls():
            # Probe as soon as the circuit turns half-open rather than a full interval later.
            return min(
                self.plugin.options.health_interval,
                self.plugin.breaker.seconds_until_probe() + 0.01,
            )
        return self.plugin.options.health_interval

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        self._wake.clear()
