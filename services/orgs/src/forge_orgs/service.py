"""The orgs service as the `forge` CLI and `forge serve` see it."""

from __future__ import annotations

from aiohttp import web
from forge_common import pages
from forge_common.app import ServiceApp
from forge_common.config import Settings
from forge_common.metrics import METRICS
from forge_common.service import Service, bind_options

from . import world
from .keys import OPTIONS
from .metrics import OverviewCacheCollector
from .options import Options
from .overview.prepared import OVERVIEW_CACHE, OverviewCache, overview_cache_context
from .pages.handlers import RENDERED, RenderedPages
from .routes import add_routes


def setup(app: web.Application, settings: Settings, options: Options) -> None:
    app[OPTIONS] = options
    app[OVERVIEW_CACHE] = OverviewCache(options.overview_cache_entries)
    app[METRICS].add_collector(OverviewCacheCollector(app[OVERVIEW_CACHE]))
    if options.overview_cache_entries > 0:
        app.cleanup_ctx.append(overview_cache_context)
    pages.setup(app, "forge_orgs.pages")
    app[RENDERED] = RenderedPages()
    add_routes(app)


SERVICE = Service(
    name="orgs",
    schema="orgs",
    migrations_package="forge_orgs.migrations",
    setup=bind_options(setup, Options()),
    validate_world=world.validate,
    load_world=world.load,
)

# this service alone in an application: tests, benchmarks (forge_common.app.ServiceApp)
create_app = ServiceApp(SERVICE, setup, Options)
