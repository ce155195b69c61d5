"""All configured plugins of one gateway process, started and stopped with the application; a
supervisor task per enabled plugin keeps it joined."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version

from forge_common import tasks

from ..options import Options
from .config import PluginConfig
from .plugin import ManagedPlugin
from .supervisor import Supervisor

log = logging.getLogger(__name__)


def server_version() -> str:
    try:
        return version("forge-plugin-gateway")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


class PluginManager:
    def __init__(self, configs: Sequence[PluginConfig], options: Options) -> None:
        self.options = options
        release = server_version()
        self._plugins = {
            c.name.lower(): ManagedPlugin(c, options, server_version=release) for c in configs
        }
        self._supervisors: dict[str, asyncio.Task[None]] = {}

    def get(self, name: str) -> ManagedPlugin | None:
        """The plugin configured under `name` (case-insensitive), enabled or not."""
        return self._plugins.get(name.lower())

    def __iter__(self) -> Iterator[ManagedPlugin]:
        return iter(self._plugins.values())

    async def start(self) -> None:
        """Connect every enabled plugin; wait a bounded time for their first Initialize.

        A plugin that is down does not hold up the gateway: it is marked down and its supervisor
        keeps trying, so it joins when it comes up.
        """
        for plugin in self:
            if plugin.connect():
                self._supervisors[plugin.name] = asyncio.create_task(
                    Supervisor(plugin).run(), name=f"plugin-{plugin.name}-supervisor"
                )
        waits = [asyncio.create_task(p.first_attempt.wait()) for p in self]
        if not waits:
            return
        _, pending = await asyncio.wait(waits, timeout=self.options.startup_wait)
        for task in pending:
            task.cancel()
        for plugin in self:
            log.info(
                "plugin %s at %s: %s",
                plugin.name,
                plugin.config.address,
                plugin.state,
                extra={"plugin": plugin.name, "plugin_state": str(plugin.state)},
            )

    async def stop(self) -> None:
        """Shutdown (each with its deadline) every joined plugin, all at once."""
        await asyncio.gather(*(self._stop(plugin) for plugin in self))

    async def _stop(self, plugin: ManagedPlugin) -> None:
        supervisor = self._supervisors.pop(plugin.name, None)
        if supervisor is not None:  # first, or it would join the plugin again
            await tasks.stop(supervisor)
        await plugin.stop()
