"""What the gateway knows about a plugin: its manifest and its last health check."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plugin.v1 import plugin_pb2

log = logging.getLogger(__name__)

# Methods a plugin route may declare; anything else in a manifest is ignored with a warning.
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    version: str = ""
    description: str = ""
    subscribed_events: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()
    required_permissions: tuple[str, ...] = ()
    license_tier: str = ""

    @classmethod
    def from_proto(cls, message: plugin_pb2.PluginManifest, plugin: str) -> Manifest:
        """Routes are kept only when usable: a known method and a path starting with '/'."""
        routes: list[Route] = []
        for route in message.routes:
            method = route.method.strip().upper()
            if method not in HTTP_METHODS or not route.path.startswith("/"):
                log.warning(
                    "plugin %s declares an unusable route %r %r; ignored",
                    plugin,
                    route.method,
                    route.path,
                )
                continue
            routes.append(Route(method, route.path, route.description))
        return cls(
            name=message.name,
            version=message.version,
            description=message.description,
            subscribed_events=tuple(dict.fromkeys(message.subscribed_events)),
            routes=tuple(routes),
            required_permissions=tuple(message.required_permissions),
            license_tier=message.license_tier,
        )

    def methods_for(self, path: str) -> set[str]:
        """The methods declared for exactly `path`."""
        return {r.method for r in self.routes if r.path == path}

    def subscribes(self, event_type: str) -> bool:
        return event_type in self.subscribed_events

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "subscribed_events": list(self.subscribed_events),
            "routes": [
                {"method": r.method, "path": r.path, "description": r.description}
                for r in self.routes
            ],
            "required_permissions": list(self.required_permissions),
            "license_tier": self.license_tier,
        }


@dataclass(frozen=True, slots=True)
class HealthResult:
    """One HealthCheck: the plugin's answer, or why there was none (`error`, for operators)."""

    healthy: bool
    checked_at: datetime
    seconds: float
    status: str = ""
    details: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "status": self.status,
            "details": dict(self.details),
            "error": self.error,
            "checked_at": self.checked_at,
            "latency_ms": round(self.seconds * 1000, 1),
        }
