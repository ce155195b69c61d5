"""The plugin gateway as the `forge` CLI and `forge serve` see it: `SERVICE` and its `setup`."""

from __future__ import annotations

from aiohttp import web
from forge_common.app import ServiceApp
from forge_common.config import Settings
from forge_common.service import Service, bind_options

from .cli import add_commands
from .events.delivery import DeliveryWorker
from .keys import DELIVERY_WORKER, HEALTH_COLLECTOR, OPTIONS, PLUGIN_MANAGER
from .lifecycle import delivery_context, health_collector_context, plugin_manager_context
from .metrics import add_gateway_metrics
from .options import Options, with_settings
from .plugins.config import load_plugins_file
from .plugins.manager import PluginManager
from .release_health.collector import HealthCollector
from .routes import add_routes


def setup(app: web.Application, settings: Settings, options: Options) -> None:
    # Read at setup, so a bad file stops `forge serve` with every problem listed.
    plugins = load_plugins_file(settings.plugins_file) if settings.plugins_file else []
    options = with_settings(options, settings)  # PLUGIN_HEALTH_SECONDS
    manager = PluginManager(plugins, options)
    app[OPTIONS] = options
    app[PLUGIN_MANAGER] = manager
    app[DELIVERY_WORKER] = DeliveryWorker(manager, options.delivery)
    app[HEALTH_COLLECTOR] = HealthCollector(manager, options.release_health)
    add_gateway_metrics(app, manager, app[DELIVERY_WORKER])
    # Plugins join first; deliveries and health rounds stop before the plugins get Shutdown.
    app.cleanup_ctx.append(plugin_manager_context)
    app.cleanup_ctx.append(delivery_context)
    app.cleanup_ctx.append(health_collector_context)
    add_routes(app)


SERVICE = Service(
    name="gateway",
    schema="gateway",
    migrations_package="forge_gateway.migrations",
    setup=bind_options(setup, Options()),
    add_commands=add_commands,
)

# this service alone in an application: tests, benchmarks (forge_common.app.ServiceApp)
create_app = ServiceApp(SERVICE, setup, Options)
