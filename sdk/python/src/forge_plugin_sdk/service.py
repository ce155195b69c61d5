"""The plugin.v1 PluginService implementation that dispatches to a Registry.

Every failure of plugin code is answered in-band (the spec's rule): a handler
exception never becomes a gRPC error, because the gateway would treat an
UNKNOWN status as a crashed plugin and could show its text to users.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

import grpc
from plugin.v1 import plugin_pb2, plugin_pb2_grpc

from .errors import HTTPError, PluginError
from .events import event_from_proto
from .http import Request, Response, to_response
from .registry import Registry

#: The protocol version this SDK implements (see plugin.proto, "Versioning").
PROTOCOL_VERSION = 1

log = logging.getLogger("forge_plugin_sdk")

Context = grpc.aio.ServicerContext[Any, Any]


class PluginServicer(plugin_pb2_grpc.PluginServiceServicer):
    """Answers the six RPCs of plugin.v1.PluginService from a Registry."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    async def Initialize(
        self, request: plugin_pb2.InitializeRequest, context: Context
    ) -> plugin_pb2.InitializeResponse:
        """Run the initialize hooks with the new config, then store it."""
        reg = self._registry
        if request.protocol_version == 0:
            log.info("Initialize from a server that predates protocol versioning")
        config = MappingProxyType(dict(request.config))
        try:
            for hook in reg.initialize_hooks:
                await hook(config)
        except PluginError as exc:
            reg.initialized = False
            return _init_failure(str(exc))
        except Exception:
            log.exception("initialize hook of plugin %s failed", reg.name)
            reg.initialized = False
            return _init_failure("plugin initialization failed")
        reg.config = config
        reg.server_version = request.server_version
        reg.server_protocol_version = request.protocol_version
        reg.initialized = True
        log.info(
            "initialized by server %s (protocol %d; ours %d)",
            request.server_version or "?",
            request.protocol_version,
            PROTOCOL_VERSION,
        )
        return plugin_pb2.InitializeResponse(
            success=True, manifest=reg.manifest().to_proto(), protocol_version=PROTOCOL_VERSION
        )

    async def Shutdown(
        self, request: plugin_pb2.ShutdownRequest, context: Context
    ) -> plugin_pb2.ShutdownResponse:
        """Run the shutdown hooks; keep serving.

        The gRPC server stays up on purpose: a plugin is a network service that
        several gateway replicas may share, and a gateway that restarts calls
        Initialize again. Stopping the process is its supervisor's job.
        """
        reg = self._registry
        log.info("Shutdown requested: %s", request.reason or "(no reason)")
        success = True
        for hook in reg.shutdown_hooks:
            try:
                await hook(request.reason)
            except Exception:
                log.exception("shutdown hook of plugin %s failed", reg.name)
                success = False
        reg.initialized = False
        return plugin_pb2.ShutdownResponse(success=success)

    async def HealthCheck(
        self, request: plugin_pb2.HealthCheckRequest, context: Context
    ) -> plugin_pb2.HealthCheckResponse:
        """Healthy while the server is serving; details are for operators."""
        reg = self._registry
        details = {
            "name": reg.name,
            "version": reg.version,
            "initialized": "true" if reg.initialized else "false",
            "protocol_version": str(PROTOCOL_VERSION),
        }
        status = "SERVING" if reg.serving else "NOT_SERVING"
        return plugin_pb2.HealthCheckResponse(healthy=reg.serving, status=status, details=details)

    async def GetManifest(
        self, request: plugin_pb2.GetManifestRequest, context: Context
    ) -> plugin_pb2.PluginManifest:
        """The manifest built from the plugin's declarations."""
        return self._registry.manifest().to_proto()

    async def OnEvent(
        self, request: plugin_pb2.PluginEvent, context: Context
    ) -> plugin_pb2.EventResponse:
        """Run every handler subscribed to the event's type, in declaration order."""
        reg = self._registry
        event = event_from_proto(request, _metadata(context))
        handlers = reg.event_handlers.get(event.type)
        if not handlers:
            return plugin_pb2.EventResponse(
                handled=False,
                error=f"plugin {reg.name} is not subscribed to event type {event.type!r}",
            )
        try:
            for handler in handlers:
                await handler(event)
        except PluginError as exc:
            log.warning("event %s (%s) not handled: %s", event.id, event.type, exc)
            return plugin_pb2.EventResponse(handled=False, error=str(exc))
        except Exception:
            log.exception(
                "event handler failed for event %s (%s), attempt %d",
                event.id,
                event.type,
                event.attempt,
            )
            return plugin_pb2.EventResponse(
                handled=False, error="internal error in the plugin's event handler"
            )
        return plugin_pb2.EventResponse(handled=True)

    async def HandleHTTP(
        self, request: plugin_pb2.HTTPRequest, context: Context
    ) -> plugin_pb2.HTTPResponse:
        """Route to the declared handler: 404 for an unknown path, 405 for a wrong method."""
        reg = self._registry
        req = Request.from_proto(request)
        entry = reg.routes.get((req.method, req.path))
        if entry is None:
            allowed = reg.allowed_methods(req.path)
            if allowed:
                return _error(405, "method not allowed", {"Allow": ", ".join(allowed)})
            return _error(404, "not found")
        _, handler = entry
        try:
            return to_response(await handler(req)).to_proto()
        except HTTPError as exc:
            return _error(exc.status if 400 <= exc.status <= 599 else 500, exc.message)
        except Exception:
            log.exception(
                "route handler failed for %s %s (request %s)", req.method, req.path, req.request_id
            )
            return _error(500, "internal error in the plugin")


def _metadata(context: Context) -> Iterable[tuple[str, str | bytes]]:
    metadata = context.invocation_metadata()
    return [(str(key), value) for key, value in metadata] if metadata else []


def _init_failure(error: str) -> plugin_pb2.InitializeResponse:
    return plugin_pb2.InitializeResponse(
        success=False, error=error, protocol_version=PROTOCOL_VERSION
    )


def _error(
    status: int, message: str, headers: dict[str, str] | None = None
) -> plugin_pb2.HTTPResponse:
    return Response.json({"message": message}, status=status, headers=headers).to_proto()
