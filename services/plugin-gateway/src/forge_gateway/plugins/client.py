"""One plugin's gRPC connection: a long-lived grpc.aio channel and calls with a deadline.

Every call goes through `PluginClient.call`, which checks the protocol-version table first (an
RPC the plugin's version lacks is never sent), always sets the RPC's deadline, and translates
gRPC failures into the few errors the rest of the gateway handles. The plugin's error text is
kept for logs and operators only (`detail`); it never reaches an end user.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from ..options import Options
from .config import PluginConfig
from .versions import RPC_MIN_VERSION, supports

PLUGIN_SERVICE = "plugin.v1.PluginService"
# The optional services beside it (release_health.proto) are not in the version table: a plugin
# declares one in its manifest, and the caller checks that before calling.
RELEASE_HEALTH_SERVICE = "plugin.v1.ReleaseHealthService"

# Failures that say "the plugin is unwell": they feed the circuit breaker and are worth retrying.
TRANSIENT_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
    }
)


R = TypeVar("R", bound=Message)


class PluginCallError(Exception):
    """A call did not produce an answer. `detail` is for logs and operators only."""

    def __init__(self, plugin: str, rpc: str, detail: str) -> None:
        super().__init__(f"plugin {plugin}: {rpc}: {detail}")
        self.plugin = plugin
        self.rpc = rpc
        self.detail = detail


class PluginUnavailable(PluginCallError):
    """The plugin is down, not initialized, or its circuit is open."""

    def __init__(self, plugin: str, rpc: str, detail: str, retry_after: int = 1) -> None:
        super().__init__(plugin, rpc, detail)
        self.retry_after = retry_after


class PluginDeadline(PluginCallError):
    """The plugin did not answer before the RPC's deadline."""


class PluginFailed(PluginCallError):
    """The plugin answered with a gRPC error (or an unreadable reply)."""

    def __init__(self, plugin: str, rpc: str, detail: str, code: grpc.StatusCode) -> None:
        super().__init__(plugin, rpc, detail)
        self.code = code


class RpcNotSupported(PluginCallError):
    """The negotiated protocol version lacks the RPC: it was not called."""


def channel_options(options: Options, plugin: PluginConfig) -> list[tuple[str, Any]]:
    chosen: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", options.max_message_bytes),
        ("grpc.max_send_message_length", options.max_message_bytes),
        ("grpc.initial_reconnect_backoff_ms", int(options.reconnect_initial * 1000)),
        ("grpc.min_reconnect_backoff_ms", int(options.connect_timeout * 1000)),
        ("grpc.max_reconnect_backoff_ms", int(options.reconnect_max * 1000)),
        # Hangs are caught by deadline-bound health checks; keepalive pings only earn
        # GOAWAY "too_many_pings" from Python servers (docs/plugins.md "Connections").
        ("grpc.keepalive_time_ms", 2**31 - 1),
        ("grpc.enable_retries", 0),
    ]
    if plugin.tls is not None and plugin.tls.server_name:
        chosen.append(("grpc.ssl_target_name_override", plugin.tls.server_name))
    return chosen


def open_channel(options: Options, plugin: PluginConfig) -> grpc.aio.Channel:
    """The one long-lived channel of a plugin; gRPC reconnects it by itself."""
    chosen = channel_options(options, plugin)
    if plugin.tls is None:
        return grpc.aio.insecure_channel(plugin.address, options=chosen)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=plugin.tls.ca,
        private_key=plugin.tls.key,
        certificate_chain=plugin.tls.cert,
    )
    return grpc.aio.secure_channel(plugin.address, credentials, options=chosen)


class PluginClient:
    """Calls one plugin's RPCs over its channel, with version check and deadline."""

    def __init__(
        self,
        plugin: PluginConfig,
        channel: grpc.aio.Channel,
        rpc_versions: Mapping[str, int] = RPC_MIN_VERSION,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.plugin = plugin
        self.channel = channel
        self.rpc_versions = rpc_versions
        self.clock = clock
        # Before Initialize has answered, the plugin is assumed to speak version 1 (every plugin
        # does); the handshake (handshake.py) sets the negotiated version.
        self.negotiated = 1
        self._callables: dict[str, grpc.aio.UnaryUnaryMultiCallable[Any, Any]] = {}
        self.last_call_seconds = 0.0

    async def call(
        self,
        rpc: str,
        request: Message,
        response_type: type[R],
        *,
        metadata: Sequence[tuple[str, str]] = (),
        deadline: float | None = None,
        service: str = PLUGIN_SERVICE,
    ) -> R:
        """Call `rpc` of `service`; raises RpcNotSupported (not sent), PluginDeadline or
        PluginFailed."""
        name = self.plugin.name
        versioned = service == PLUGIN_SERVICE
        if versioned and not supports(rpc, self.negotiated, self.rpc_versions):
            needed = self.rpc_versions.get(rpc)
            raise RpcNotSupported(
                name,
                rpc,
                f"needs protocol version {needed}, the plugin speaks {self.negotiated}"
                if needed is not None
                else "not part of any protocol version this gateway speaks",
            )
        path = f"/{service}/{rpc}"
        callable_ = self._callables.get(path)
        if callable_ is None:
            callable_ = self.channel.unary_unary(
                path,
                request_serializer=_serialize,
                response_deserializer=response_type.FromString,
            )
            self._callables[path] = callable_
        if deadline is None:
            deadline = self.plugin.timeouts.for_rpc(rpc)
        started = self.clock()
        try:
            response = await callable_(request, timeout=deadline, metadata=tuple(metadata))
        except grpc.aio.AioRpcError as error:
            raise _translate(name, rpc, error, deadline) from None
        finally:
            self.last_call_seconds = self.clock() - started
        if not isinstance(response, response_type):  # pragma: no cover - deserializer's type
            raise PluginFailed(name, rpc, "unexpected reply type", grpc.StatusCode.INTERNAL)
        return response


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _translate(plugin: str, rpc: str, error: grpc.aio.AioRpcError, deadline: float) -> Exception:
    code = error.code()
    details = error.details() or ""
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return PluginDeadline(plugin, rpc, f"no answer within {deadline:g} s")
    if code is grpc.StatusCode.UNAVAILABLE:
        return PluginUnavailable(plugin, rpc, f"unavailable: {details}")
    return PluginFailed(plugin, rpc, f"{code.name}: {details}", code)
