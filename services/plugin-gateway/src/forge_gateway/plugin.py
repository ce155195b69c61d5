"""One managed plugin: its state, its lifecycle and the guarded calls the gateway makes.

    connecting ─Initialize+GetManifest ok─▶ ready ◀─health ok, Initialize again─ unhealthy
        │                                    │  └──health fails (deadline, healthy=false)──▶┘
        └─unreachable──▶ down ◀─unreachable, connection lost──┘
    Initialize says no ▶ failed        version below the minimum ▶ refused

A supervisor task per plugin keeps it joined: it retries Initialize with backoff while the plugin
is down, failed or refused (it may be fixed or upgraded), checks health on an interval with a
deadline, and initializes again after a restart (the connection dropped, health came back after
failing, or the plugin reports it is no longer initialized or is another instance).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

import grpc
from google.protobuf.message import Message
from plugin.v1 import plugin_pb2

from .breaker import CircuitBreaker
from .client import (
    TRANSIENT_CODES,
    PluginCallError,
    PluginClient,
    PluginDeadline,
    PluginFailed,
    PluginUnavailable,
    open_channel,
)
from .config import GatewayOptions, PluginConfig
from .models import HealthResult, Manifest
from .versions import VersionRefused, negotiate

log = logging.getLogger(__name__)
R = TypeVar("R", bound=Message)


class PluginState(StrEnum):
    CONNECTING = "connecting"
    READY = "ready"
    UNHEALTHY = "unhealthy"
    DOWN = "down"
    FAILED = "failed"
    REFUSED = "refused"
    DISABLED = "disabled"
    STOPPED = "stopped"


_JOINED = frozenset({PluginState.READY, PluginState.UNHEALTHY})


class ManagedPlugin:
    def __init__(
        self,
        config: PluginConfig,
        options: GatewayOptions,
        *,
        server_version: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.options = options
        self.server_version = server_version
        self.clock = clock
        self.state = PluginState.CONNECTING if config.enabled else PluginState.DISABLED
        self.error: str | None = None  # the last lifecycle problem, for operators
        self.reported_version: int | None = None
        self.negotiated_version: int | None = None
        self.manifest: Manifest | None = None
        self.health: HealthResult | None = None
        self.initialized_at: datetime | None = None
        self.initialize_count = 0  # successful Initialize calls (the first one and re-joins)
        self.breaker = CircuitBreaker(options.breaker, clock)
        self.client: PluginClient | None = None
        self.first_attempt = asyncio.Event()
        self._wake = asyncio.Event()
        self._connection_lost = False
        self._instance: str | None = None
        self._retry_delay = options.retry_initial
        self._next_join_at = 0.0
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def name(self) -> str:
        return self.config.name

    # Calls on behalf of users and deliveries ------------------------------------------------

    def retry_after(self) -> int:
        """Whole seconds a caller should wait before trying again (at least 1)."""
        if not self.breaker.allows_calls():
            return self.breaker.retry_after()
        wait = max(self._next_join_at - self.clock(), self.options.health_interval)
        return max(1, int(wait + 0.999))

    async def call(
        self,
        rpc: str,
        request: Message,
        response_type: type[R],
        *,
        metadata: Sequence[tuple[str, str]] = (),
    ) -> R:
        """A call that only reaches a ready plugin with a closed circuit, and feeds the breaker.

        Raises PluginUnavailable (with retry_after) without calling when the plugin is not ready
        or its circuit is open; RpcNotSupported when its protocol version lacks `rpc`.
        """
        if self.state is not PluginState.READY or self.client is None:
            raise PluginUnavailable(self.name, rpc, f"plugin is {self.state}", self.retry_after())
        if not self.breaker.allows_calls():
            raise PluginUnavailable(
                self.name, rpc, "circuit open", retry_after=self.breaker.retry_after()
            )
        client = self.client
        try:
            response = await client.call(rpc, request, response_type, metadata=metadata)
        except (PluginUnavailable, PluginDeadline, PluginFailed) as error:
            failed = not isinstance(error, PluginFailed) or error.code in TRANSIENT_CODES
            self.breaker.record_call(failed=failed, seconds=client.last_call_seconds)
            if isinstance(error, PluginUnavailable):
                error.retry_after = self.retry_after()
                self._wake.set()  # let the supervisor notice the plugin is gone now
            raise
        self.breaker.record_call(failed=False, seconds=client.last_call_seconds)
        return response

    # Lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the channel and start supervising; returns at once (see `first_attempt`)."""
        if not self.config.enabled:
            self.first_attempt.set()
            return
        channel = open_channel(self.options, self.config)
        self.client = PluginClient(self.config, channel, self.options.rpc_versions, self.clock)
        self._tasks = [
            asyncio.create_task(self._supervise(), name=f"plugin-{self.name}-supervisor"),
            asyncio.create_task(self._watch_channel(), name=f"plugin-{self.name}-channel"),
        ]

    async def stop(self, reason: str = "server shutdown") -> None:
        """Stop supervising, send Shutdown (with its deadline) if joined, close the channel."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self.client is None:
            return
        if self.state in _JOINED:
            try:
                await self.client.call(
                    "Shutdown",
                    plugin_pb2.ShutdownRequest(reason=reason),
                    plugin_pb2.ShutdownResponse,
                )
            except PluginCallError as error:
                log.warning("plugin %s: Shutdown failed: %s", self.name, error.detail)
        await self.client.channel.close()
        self.client = None
        self._set_state(PluginState.STOPPED, None)

    async def _supervise(self) -> None:
        while True:
            try:
                await self._supervise_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not leave the plugin unsupervised for good
                log.exception("plugin %s: supervisor error", self.name)
                self._set_state(PluginState.DOWN, "internal error in the gateway; retrying")
                self.first_attempt.set()
                await self._back_off()

    async def _supervise_once(self) -> None:
        """One round: join if needed (backing off on failure), then wait and check health."""
        if self.state not in _JOINED:
            joined = await self._join()
            self.first_attempt.set()
            if not joined:
                await self._back_off()
                return
        await self._sleep(self._health_wait())
        if self._connection_lost:
            self._connection_lost = False
            self._set_state(PluginState.DOWN, "connection lost; initializing again")
            return
        await self._check_health()

    async def _watch_channel(self) -> None:
        """A joined plugin whose connection leaves READY may have restarted: join again."""
        assert self.client is not None
        channel = self.client.channel
        state = channel.get_state()
        while True:
            await channel.wait_for_state_change(state)
            new = channel.get_state()
            ready = grpc.ChannelConnectivity.READY
            if state is ready and new is not ready and self.state in _JOINED:
                self._connection_lost = True
                self._wake.set()
            state = new

    async def _join(self) -> bool:
        """Initialize, negotiate the version, read the manifest; True when ready."""
        assert self.client is not None
        request = plugin_pb2.InitializeRequest(
            server_version=self.server_version,
            config=dict(self.config.config),
            protocol_version=self.options.protocol_version,
        )
        # Initialize belongs to every version; the plugin's own version is not known yet.
        self.client.negotiated = self.options.min_protocol_version
        try:
            reply = await self.client.call("Initialize", request, plugin_pb2.InitializeResponse)
            if not reply.success:
                return self._fail(PluginState.FAILED, f"Initialize: {reply.error or 'refused'}")
            self.reported_version = reply.protocol_version
            negotiated = negotiate(
                self.name,
                reply.protocol_version,
                ours=self.options.protocol_version,
                minimum=self.options.min_protocol_version,
            )
            self.client.negotiated = negotiated
            manifest = await self._manifest(reply)
        except VersionRefused as refused:
            self.negotiated_version = None
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
        self.negotiated_version = negotiated
        self.manifest = manifest
        if manifest.name and manifest.name != self.name:
            log.info("plugin %s calls itself %r in its manifest", self.name, manifest.name)
        self.initialize_count += 1
        self.initialized_at = datetime.now(UTC)
        self._instance = None
        self._retry_delay = self.options.retry_initial
        self.breaker.reset()
        log.info(
            "plugin %s initialized: reported protocol version %d, negotiated %d, manifest %s %s",
            self.name,
            reply.protocol_version,
            negotiated,
            manifest.name or "?",
            manifest.version or "?",
            extra={
                "plugin": self.name,
                "reported_protocol_version": reply.protocol_version,
                "negotiated_protocol_version": negotiated,
            },
        )
        self._set_state(PluginState.READY, None)
        return True

    async def _manifest(self, reply: plugin_pb2.InitializeResponse) -> Manifest | None:
        """GetManifest; a plugin without it may have sent its manifest with Initialize."""
        assert self.client is not None
        try:
            message = await self.client.call(
                "GetManifest", plugin_pb2.GetManifestRequest(), plugin_pb2.PluginManifest
            )
        except PluginFailed as error:
            if error.code is not grpc.StatusCode.UNIMPLEMENTED:
                raise
            if not reply.HasField("manifest"):
                return None
            message = reply.manifest
        return Manifest.from_proto(message, self.name)

    async def _check_health(self) -> None:
        assert self.client is not None
        started = self.clock()
        healthy, status, details, problem = False, "", {}, None
        unreachable = False
        try:
            reply = await self.client.call(
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
        previous = self.health
        self.health = HealthResult(
            healthy=healthy,
            checked_at=datetime.now(UTC),
            seconds=self.clock() - started,
            status=status,
            details=details,
            error=problem,
        )
        self.breaker.record_health(healthy=healthy)
        if not healthy:
            self._set_state(PluginState.DOWN if unreachable else PluginState.UNHEALTHY, problem)
            return
        if self._restarted(previous, details):
            self._set_state(PluginState.DOWN, "plugin restarted; initializing again")
        elif self.state is PluginState.UNHEALTHY:
            # Healthy again after failing: it may have restarted meanwhile, so initialize again.
            self._set_state(PluginState.DOWN, "healthy again; initializing again")

    def _restarted(self, previous: HealthResult | None, details: dict[str, str]) -> bool:
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
        self._set_state(state, problem)
        return False

    def _set_state(self, state: PluginState, problem: str | None) -> None:
        if state is not self.state:
            level = (
                logging.INFO
                if state in (PluginState.READY, PluginState.STOPPED)
                else (logging.WARNING)
            )
            if state is PluginState.REFUSED:
                level = logging.ERROR
            log.log(
                level,
                "plugin %s: %s -> %s%s",
                self.name,
                self.state,
                state,
                f": {problem}" if problem else "",
                extra={"plugin": self.name, "plugin_state": str(state)},
            )
        self.state = state
        self.error = problem

    async def _back_off(self) -> None:
        delay = self._retry_delay * random.uniform(0.8, 1.2)  # jitter: replicas do not align
        self._retry_delay = min(self._retry_delay * 2, self.options.retry_max)
        self._next_join_at = self.clock() + delay
        await self._sleep(delay)

    def _health_wait(self) -> float:
        if not self.breaker.allows_calls():
            # Probe as soon as the circuit turns half-open rather than a full interval later.
            return min(self.options.health_interval, self.breaker.seconds_until_probe() + 0.01)
        return self.options.health_interval

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        self._wake.clear()
