"""The :class:`Plugin` facade: declare a plugin, then serve it.

Example::

    plugin = Plugin("hello", "1.0.0", "Says hello")

    @plugin.on_event("release.published")
    async def published(event: Event) -> None: ...

    @plugin.route("GET", "/hello")
    async def hello(request: Request) -> dict[str, str]:
        return {"hello": request.caller.login or "anonymous"}

    plugin.serve("127.0.0.1:50051")
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from .health import HealthHandler, ReleaseHealthServicer
from .manifest import Manifest
from .registry import EventHandler, InitializeHook, Registry, RouteHandler, ShutdownHook
from .server import RunningServer, start_server, stop_server
from .service import PluginServicer

log = logging.getLogger("forge_plugin_sdk")

_E = TypeVar("_E", bound=EventHandler)
_R = TypeVar("_R", bound=RouteHandler)
_I = TypeVar("_I", bound=InitializeHook)
_S = TypeVar("_S", bound=ShutdownHook)
_H = TypeVar("_H", bound=HealthHandler)


class Plugin:
    """A forge plugin: its manifest, its handlers and its gRPC server."""

    def __init__(
        self,
        name: str,
        version: str,
        description: str = "",
        *,
        permissions: Iterable[str] = (),
        license_tier: str = "",
    ) -> None:
        if not name:
            raise ValueError("a plugin needs a name")
        self.registry = Registry(
            name=name,
            version=version,
            description=description,
            permissions=tuple(permissions),
            license_tier=license_tier,
        )
        self._running: RunningServer | None = None

    # Declarations -----------------------------------------------------------

    def on_event(self, *event_types: str) -> Callable[[_E], _E]:
        """Decorate an ``async def handler(event: Event) -> None`` for these event types.

        The types are added to the manifest's subscribed_events. Returning
        means handled; raising PluginError answers handled=false with its
        message; any other exception answers a generic error and is logged.
        """

        def register(handler: _E) -> _E:
            self.registry.add_event_handler(event_types, handler)
            return handler

        return register

    def route(self, method: str, path: str, description: str = "") -> Callable[[_R], _R]:
        """Decorate an ``async def handler(request: Request)`` serving ``method path``.

        The handler returns a Response, a dict or list (JSON), bytes or str;
        it may raise HTTPError for an error status. The route is added to the
        manifest.
        """

        def register(handler: _R) -> _R:
            self.registry.add_route(method, path, description, handler)
            return handler

        return register

    def on_initialize(self, hook: _I) -> _I:
        """Decorate an ``async def hook(config: Mapping[str, str]) -> None`` run by Initialize.

        Raise PluginError to refuse the configuration (success=false).
        """
        self.registry.initialize_hooks.append(hook)
        return hook

    def on_shutdown(self, hook: _S) -> _S:
        """Decorate an ``async def hook(reason: str) -> None`` run by Shutdown."""
        self.registry.shutdown_hooks.append(hook)
        return hook

    def on_release_health(self, handler: _H) -> _H:
        """Decorate an ``async def handler(request: HealthRequest) -> Iterable[VersionHealth]``
        answering forge's GetReleaseHealth (a rollout's external signal).

        The manifest then asks for the permission ``release:health``; forge calls the handler
        only for the repositories its operator granted the plugin. Return the figures of the
        versions you know (leave the others out); raise PluginError when there are none now.
        """
        if self.registry.health_handler is not None:
            raise ValueError("on_release_health is already declared")
        self.registry.health_handler = handler
        return handler

    # State --------------------------------------------------------------------

    @property
    def manifest(self) -> Manifest:
        """The manifest as declared so far."""
        return self.registry.manifest()

    @property
    def config(self) -> Mapping[str, str]:
        """The configuration received by the last successful Initialize."""
        return self.registry.config

    @property
    def port(self) -> int | None:
        """The bound port while running, else None."""
        return self._running.port if self._running else None

    # Serving ------------------------------------------------------------------

    async def start(self, address: str = "127.0.0.1:0") -> int:
        """Start serving on ``address`` (port 0 picks a free one); return the bound port."""
        if self._running is not None:
            raise RuntimeError(f"plugin {self.registry.name} is already running")
        health = self.registry.health_handler
        extra = () if health is None else (ReleaseHealthServicer(health, self.registry.name),)
        self._running = await start_server(PluginServicer(self.registry), address, extra)
        self.registry.serving = True
        log.info(
            "plugin %s %s listening on %s",
            self.registry.name,
            self.registry.version,
            self._running.port,
        )
        return self._running.port

    async def stop(self, grace: float = 5.0) -> None:
        """Stop serving, letting in-flight calls finish for up to ``grace`` seconds."""
        running, self._running = self._running, None
        if running is None:
            return
        self.registry.serving = False
        await stop_server(running, grace)

    async def serve_async(self, address: str, grace: float = 5.0) -> None:
        """Serve until SIGINT or SIGTERM, then stop gracefully.

        Prints ``listening on PORT`` on stdout once ready, so a supervisor or
        a test can wait for that line.
        """
        port = await self.start(address)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping.set)
        print(f"listening on {port}", flush=True)
        try:
            await stopping.wait()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            log.info("stopping plugin %s", self.registry.name)
            await self.stop(grace)

    def serve(self, address: str, grace: float = 5.0) -> None:
        """Blocking entry point for a plugin's ``main``: see :meth:`serve_async`."""
        try:
            asyncio.run(self.serve_async(address, grace))
        except OSError as exc:
            sys.exit(f"{self.registry.name}: {exc}")
