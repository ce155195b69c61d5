"""The plugin gateway as the `forge` CLI and `forge serve` see it."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from forge_common.config import Settings
from forge_common.service import Service

from .cli import add_commands
from .config import PluginConfig, load_plugins_file
from .delivery import DeliveryWorker, delivery_context
from .keys import DELIVERY_WORKER, PLUGIN_MANAGER
from .manager import PluginManager, plugin_manager_context
from .options import Options
from .routes import add_routes


def make_setup(
    options: Options | None = None,
) -> Callable[[web.Application, Settings], None]:
    """A setup with these options (tests shorten intervals); plugins come from PLUGINS_FILE."""

    def setup(app: web.Application, settings: Settings) -> None:
        # Read at setup, so a bad file stops `forge serve` with every problem listed.
        plugins: list[PluginConfig] = (
            load_plugins_file(settings.plugins_file) if settings.plugins_file else []
        )
        chosen = options or Options()
        manager = PluginManager(plugins, chosen)
        app[PLUGIN_MANAGER] = manager
        app[DELIVERY_WORKER] = DeliveryWorker(manager, chosen.delivery)
        # Plugins join first; deliveries stop before the plugins get Shutdown.
        app.cleanup_ctx.append(plugin_manager_context)
        app.cleanup_ctx.append(delivery_context)
        add_routes(app)

    return setup


SERVICE = Service(
    name="gateway",
    schema="gateway",
    migrations_package="forge_gateway.migrations",
    setup=make_setup(),
    add_commands=add_commands,
)
