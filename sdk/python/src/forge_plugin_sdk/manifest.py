"""The plugin manifest: who the plugin is, which events and routes it serves."""

from __future__ import annotations

from dataclasses import dataclass

from plugin.v1 import plugin_pb2


@dataclass(frozen=True, slots=True)
class Route:
    """One HTTP route, served at ``/api/v1/plugins/{plugin}{path}`` by the gateway."""

    method: str
    path: str
    description: str = ""

    def to_proto(self) -> plugin_pb2.PluginRoute:
        """The wire form of this route."""
        return plugin_pb2.PluginRoute(
            method=self.method, path=self.path, description=self.description
        )


@dataclass(frozen=True, slots=True)
class Manifest:
    """What GetManifest (and Initialize) report to the gateway."""

    name: str
    version: str
    description: str = ""
    subscribed_events: tuple[str, ...] = ()
    routes: tuple[Route, ...] = ()
    required_permissions: tuple[str, ...] = ()
    license_tier: str = ""

    def to_proto(self) -> plugin_pb2.PluginManifest:
        """The wire form of this manifest."""
        return plugin_pb2.PluginManifest(
            name=self.name,
            version=self.version,
            description=self.description,
            subscribed_events=list(self.subscribed_events),
            routes=[route.to_proto() for route in self.routes],
            required_permissions=list(self.required_permissions),
            license_tier=self.license_tier,
        )


def normalize_method(method: str) -> str:
    """Upper-case an HTTP method name, refusing anything that is not a token."""
    upper = method.strip().upper()
    if not upper.isalpha():
        raise ValueError(f"invalid HTTP method {method!r}")
    return upper


def validate_path(path: str) -> str:
    """Check a route path: starts with "/", no query string, no whitespace."""
    if not path.startswith("/") or "?" in path or any(ch.isspace() for ch in path):
        raise ValueError(f"invalid route path {path!r}: it must start with '/' and hold no query")
    return path
