"""What a plugin declared (handlers, routes, hooks) and what it was told (config).

The :class:`Registry` is shared by the public :class:`~forge_plugin_sdk.Plugin`
facade, which fills it, and the gRPC servicer, which reads it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .events import Event
from .health import RELEASE_HEALTH_PERMISSION, HealthHandler
from .http import Request, ResponseLike
from .manifest import Manifest, Route, normalize_method, validate_path

EventHandler = Callable[[Event], Awaitable[None]]
RouteHandler = Callable[[Request], Awaitable[ResponseLike]]
InitializeHook = Callable[[Mapping[str, str]], Awaitable[None]]
ShutdownHook = Callable[[str], Awaitable[None]]


@dataclass(slots=True)
class Registry:
    """Declarations and runtime state of one plugin."""

    name: str
    version: str
    description: str = ""
    permissions: tuple[str, ...] = ()
    license_tier: str = ""
    # Insertion order is kept so the manifest lists events and routes in
    # declaration order, which keeps GetManifest output stable.
    event_handlers: dict[str, list[EventHandler]] = field(default_factory=dict)
    routes: dict[tuple[str, str], tuple[Route, RouteHandler]] = field(default_factory=dict)
    initialize_hooks: list[InitializeHook] = field(default_factory=list)
    shutdown_hooks: list[ShutdownHook] = field(default_factory=list)
    # Set by @plugin.on_release_health: the plugin serves ReleaseHealthService too.
    health_handler: HealthHandler | None = None
    # Set by Initialize.
    config: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    server_version: str = ""
    server_protocol_version: int = 0
    initialized: bool = False
    # True between a successful start and the beginning of stop.
    serving: bool = False

    def add_event_handler(self, event_types: tuple[str, ...], handler: EventHandler) -> None:
        """Subscribe ``handler`` to each of ``event_types``."""
        if not event_types:
            raise ValueError("on_event needs at least one event type")
        for event_type in event_types:
            if not event_type or event_type != event_type.strip():
                raise ValueError(f"invalid event type {event_type!r}")
            self.event_handlers.setdefault(event_type, []).append(handler)

    def add_route(self, method: str, path: str, description: str, handler: RouteHandler) -> None:
        """Serve ``method path`` with ``handler``; each pair may be declared once."""
        key = (normalize_method(method), validate_path(path))
        if key in self.routes:
            raise ValueError(f"route {key[0]} {key[1]} is already declared")
        self.routes[key] = (Route(key[0], key[1], description), handler)

    def allowed_methods(self, path: str) -> list[str]:
        """Methods declared for ``path``, for a 405's Allow header."""
        return sorted(method for method, route_path in self.routes if route_path == path)

    def _permissions(self) -> tuple[str, ...]:
        """The declared permissions, with release:health when a health handler is set."""
        if self.health_handler is None or RELEASE_HEALTH_PERMISSION in self.permissions:
            return self.permissions
        return (*self.permissions, RELEASE_HEALTH_PERMISSION)

    def manifest(self) -> Manifest:
        """The manifest as declared so far."""
        return Manifest(
            name=self.name,
            version=self.version,
            description=self.description,
            subscribed_events=tuple(self.event_handlers),
            routes=tuple(route for route, _ in self.routes.values()),
            required_permissions=self._permissions(),
            license_tier=self.license_tier,
        )
