"""One managed plugin: what the gateway knows about it and the guarded calls it makes.

`call` reaches only a ready plugin whose circuit is closed, and feeds the breaker with every
outcome; its Supervisor (supervisor.py) keeps it joined.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from google.protobuf.message import Message
from plugin.v1 import plugin_pb2

from ..options import Options
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
from .config import PluginConfig
from .models import HealthResult, Manifest
from .state import JOINED, PluginState
from .supervisor import Supervisor

__all__ = ["ManagedPlugin", "PluginState"]

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
        self.supervisor = Supervisor(self)
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    # Calls on behalf of users and deliveries ------------------------------------------------

    def retry_after(self) -> int:
        """Whole seconds a caller should wait before trying again (at least 1)."""
        if not self.breaker.allows_calls():
            return self.breaker.retry_after()
        wait = max(self.supervisor.next_join_at - self.clock(), self.options.health_interval)
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
                self.supervisor.wake()  # let the supervisor notice the plugin is gone now
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
        self._task = asyncio.create_task(
            self.supervisor.run(), name=f"plugin-{self.name}-supervisor"
        )

    async def stop(self, reason: str = "server shutdown") -> None:
        """Stop supervising, send Shutdown (with its deadline) if joined, close the channel."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.client is None:
            return
        if self.state in JOINED:
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
        self.set_state(PluginState.STOPPED, None)

    def set_state(self, state: PluginState, problem: str | None) -> None:
        """Change state, logging the transition and its reason."""
        if state is not self.state:
            level = logging.WARNING
            if state in (PluginState.READY, PluginState.STOPPED):
                level = logging.INFO
            elif state is PluginState.REFUSED:
                level = logging.ERROR  # needs an operator: upgrade the plugin
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
