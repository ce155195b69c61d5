"""One managed plugin: its state, the only code that changes it, and the guarded calls made to it.

    connecting ─join ok─▶ ready ◀─health ok, joined again─ unhealthy
        │                   │  └──health fails (deadline, healthy=false)──▶┘
        └─unreachable──▶ down ◀─unreachable, connection lost, restarted──┘
    Initialize says no ▶ failed        version below the minimum ▶ refused

`call` reaches only a ready plugin whose circuit is closed, and feeds the breaker with every
outcome. The supervisor (supervisor.py) decides when to join and to check health; the outcomes
come back here (`record_join`, `record_health`), and only these methods change the state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from google.protobuf.message import Message
from plugin.v1 import plugin_pb2

from ..options import Options
from .breaker import CircuitBreaker
from .client import (
    PLUGIN_SERVICE,
    TRANSIENT_CODES,
    PluginCallError,
    PluginClient,
    PluginDeadline,
    PluginFailed,
    PluginUnavailable,
    open_channel,
)
from .config import PluginConfig
from .handshake import JoinOutcome
from .models import HealthResult, Manifest
from .state import JOINED, PluginState

log = logging.getLogger(__name__)
R = TypeVar("R", bound=Message)


class ManagedPlugin:
    def __init__(
        self,
        config: PluginConfig,
        options: Options,
        *,
        server_version: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.options = options
        self.server_version = server_version
        self.clock = clock
        self.breaker = CircuitBreaker(options.breaker, clock)
        # Set when the plugin leaves `connecting` (start-up waits for it, bounded).
        self.first_attempt = asyncio.Event()
        self._state = PluginState.CONNECTING if config.enabled else PluginState.DISABLED
        self._error: str | None = None  # the last lifecycle problem, for operators
        self._reported_version: int | None = None
        self._negotiated_version: int | None = None
        self._manifest: Manifest | None = None
        self._health: HealthResult | None = None
        self._initialized_at: datetime | None = None
        self._initialize_count = 0  # successful Initialize calls (the first one and re-joins)
        self._instance: str | None = None  # the instance its health details name, if any
        self._next_join_at = 0.0
        self._client: PluginClient | None = None
        self._wake = asyncio.Event()
        # Called when the plugin becomes ready (joined or re-joined): the delivery worker claims
        # its waiting deliveries at once instead of at its next poll.
        self.on_ready: list[Callable[[], None]] = []

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def state(self) -> PluginState:
        return self._state

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def reported_version(self) -> int | None:
        return self._reported_version

    @property
    def negotiated_version(self) -> int | None:
        return self._negotiated_version

    @property
    def manifest(self) -> Manifest | None:
        return self._manifest

    @property
    def health(self) -> HealthResult | None:
        return self._health

    @property
    def initialized_at(self) -> datetime | None:
        return self._initialized_at

    @property
    def initialize_count(self) -> int:
        return self._initialize_count

    @property
    def client(self) -> PluginClient | None:
        """The connection, from `connect` to `stop`."""
        return self._client

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
        service: str = PLUGIN_SERVICE,
    ) -> R:
        """A call that only reaches a ready plugin with a closed circuit, and feeds the breaker.

        Raises PluginUnavailable (with retry_after) without calling when the plugin is not ready
        or its circuit is open; RpcNotSupported when its protocol version lacks `rpc`.
        """
        if self._state is not PluginState.READY or self._client is None:
            raise PluginUnavailable(self.name, rpc, f"plugin is {self._state}", self.retry_after())
        if not self.breaker.allows_calls():
            raise PluginUnavailable(
                self.name, rpc, "circuit open", retry_after=self.breaker.retry_after()
            )
        client = self._client
        try:
            response = await client.call(
                rpc, request, response_type, metadata=metadata, service=service
            )
        except (PluginUnavailable, PluginDeadline, PluginFailed) as error:
            failed = not isinstance(error, PluginFailed) or error.code in TRANSIENT_CODES
            self.breaker.record_call(failed=failed, seconds=client.last_call_seconds)
            if isinstance(error, PluginUnavailable):
                error.retry_after = self.retry_after()
                self.wake()  # let the supervisor notice the plugin is gone now
            raise
        self.breaker.record_call(failed=False, seconds=client.last_call_seconds)
        return response

    # Connection -----------------------------------------------------------------------------

    def connect(self) -> bool:
        """Open the channel; False for a disabled plugin, which is never called or supervised."""
        if not self.config.enabled:
            self.first_attempt.set()
            return False
        channel = open_channel(self.options, self.config)
        self._client = PluginClient(self.config, channel, self.options.rpc_versions, self.clock)
        return True

    async def stop(self, reason: str = "server shutdown") -> None:
        """Send Shutdown (with its deadline) if joined, close the channel. Stop supervising
        first: the supervisor would join the plugin again."""
        if self._client is None:
            return
        if self._state in JOINED:
            try:
                await self._client.call(
                    "Shutdown",
                    plugin_pb2.ShutdownRequest(reason=reason),
                    plugin_pb2.ShutdownResponse,
                )
            except PluginCallError as error:
                log.warning("plugin %s: Shutdown failed: %s", self.name, error.detail)
        await self._client.channel.close()
        self._client = None
        self._set_state(PluginState.STOPPED, None)

    # Supervision: its outcomes, and its pace ------------------------------------------------

    def record_join(self, outcome: JoinOutcome) -> bool:
        """The outcome of a join attempt; True when the plugin is ready."""
        if outcome.reported_version is not None:
            self._reported_version = outcome.reported_version
        if outcome.state is not PluginState.READY:
            if outcome.state is PluginState.REFUSED:
                self._negotiated_version = None  # no version both sides speak
            self._set_state(outcome.state, outcome.problem)
            return False
        manifest, negotiated = outcome.manifest, outcome.negotiated_version
        assert manifest is not None and negotiated is not None  # READY carries both
        self._negotiated_version = negotiated
        self._manifest = manifest
        if manifest.name and manifest.name != self.name:
            log.info("plugin %s calls itself %r in its manifest", self.name, manifest.name)
        self._initialize_count += 1
        self._initialized_at = datetime.now(UTC)
        self._instance = None
        self.breaker.reset()
        log.info(
            "plugin %s initialized: reported protocol version %d, negotiated %d, manifest %s %s",
            self.name,
            outcome.reported_version,
            negotiated,
            manifest.name or "?",
            manifest.version or "?",
            extra={
                "plugin": self.name,
                "reported_protocol_version": outcome.reported_version,
                "negotiated_protocol_version": negotiated,
            },
        )
        self._set_state(PluginState.READY, None)
        return True

    def record_health(self, result: HealthResult, *, unreachable: bool) -> None:
        """A health check's outcome: it feeds the breaker, and may call for joining again."""
        self._health = result
        self.breaker.record_health(healthy=result.healthy)
        if not result.healthy:
            state = PluginState.DOWN if unreachable else PluginState.UNHEALTHY
            self._set_state(state, result.error)
            return
        if self._restarted(result.details):
            self._set_state(PluginState.DOWN, "plugin restarted; initializing again")
        elif self._state is PluginState.UNHEALTHY:
            # Healthy again after failing: it may have restarted meanwhile, so initialize again.
            self._set_state(PluginState.DOWN, "healthy again; initializing again")

    def mark_down(self, problem: str) -> None:
        """Down until joined again (the connection was lost, or supervising it failed)."""
        self._set_state(PluginState.DOWN, problem)

    def retry_join_in(self, seconds: float) -> None:
        """The supervisor joins again in `seconds`; callers are told to wait at least that."""
        self._next_join_at = self.clock() + seconds

    def wake(self) -> None:
        """Have the supervisor look at the plugin now rather than at its next interval."""
        self._wake.set()

    async def wait_unless_woken(self, seconds: float) -> None:
        """The supervisor's pause between rounds: `seconds`, or until `wake`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        self._wake.clear()

    def _restarted(self, details: Mapping[str, str]) -> bool:
        """The plugin forgot its initialization or is a new instance (details are optional)."""
        if details.get("initialized") == "false":
            return True
        instance = details.get("instance") or details.get("instance_id")
        if instance is None:
            return False
        changed = self._instance is not None and instance != self._instance
        self._instance = instance
        return changed

    def _set_state(self, state: PluginState, problem: str | None) -> None:
        """Change state, logging the transition and its reason."""
        if state is not self._state:
            level = logging.WARNING
            if state in (PluginState.READY, PluginState.STOPPED):
                level = logging.INFO
            elif state is PluginState.REFUSED:
                level = logging.ERROR  # needs an operator: upgrade the plugin
            log.log(
                level,
                "plugin %s: %s -> %s%s",
                self.name,
                self._state,
                state,
                f": {problem}" if problem else "",
                extra={"plugin": self.name, "plugin_state": str(state)},
            )
        became_ready = state is PluginState.READY and self._state is not PluginState.READY
        self._state = state
        self._error = problem
        self.first_attempt.set()  # any verdict ends the first attempt
        if became_ready:
            for listener in self.on_ready:
                listener()
