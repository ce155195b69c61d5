"""The releases service as the `forge` CLI and `forge serve` see it: `SERVICE`, and `setup`,
which puts the service's state, hooks and routes into an application."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common import pages
from forge_common.app import ServiceApp
from forge_common.auth import UPDATE_KEYS_IN_HEADER
from forge_common.config import Settings
from forge_common.service import Service, bind_options

from . import world
from .access_keys.grant import LAST_USE_WRITTEN
from .access_keys.signed_urls import URL_SIGNER, UrlSigner
from .audit_log.lifecycle import audit_retention_context
from .counter import DownloadCounter
from .insights.beside_nginx import add_insights_commands
from .insights.counter import InsightsCounter, Uncounted
from .insights.dimensions import Defaults
from .insights.lifecycle import insights_context
from .keys import DOWNLOAD_COUNTER, INSIGHTS, OPTIONS, RELEASE_CACHE, STORAGE
from .lifecycle import counter_context, listener_context, storage_context
from .metrics import add_releases_metrics
from .options import Options, with_settings
from .pages.cache import PAGE_CACHE, PageCache
from .read.cache import ReleaseCache
from .rollouts.evaluator import evaluator_context
from .routes import add_routes
from .storage import open_storage
from .storage.commands import add_storage_commands


def setup(app: web.Application, settings: Settings, options: Options) -> None:
    options = with_settings(options, settings)
    app[OPTIONS] = options
    app[RELEASE_CACHE] = ReleaseCache(options.cache)
    app[DOWNLOAD_COUNTER] = DownloadCounter()
    counting = InsightsCounter if settings.insights_enabled else Uncounted
    app[INSIGHTS] = counting(Defaults(settings.server_os, settings.server_arch))
    app[STORAGE] = open_storage(settings)
    app[URL_SIGNER] = UrlSigner.from_settings(settings)
    app[LAST_USE_WRITTEN] = {}
    app[UPDATE_KEYS_IN_HEADER] = True  # Velopack's clients send keys as a header
    add_releases_metrics(app, app[RELEASE_CACHE], app[DOWNLOAD_COUNTER], app[INSIGHTS])
    app.cleanup_ctx.append(listener_context)
    app.cleanup_ctx.append(counter_context)
    app.cleanup_ctx.append(insights_context)
    app.cleanup_ctx.append(audit_retention_context)
    app.cleanup_ctx.append(storage_context)
    app.cleanup_ctx.append(evaluator_context)
    app[PAGE_CACHE] = PageCache()
    pages.setup(app, "forge_releases.pages")
    add_routes(app)


def add_commands(commands: Any) -> None:
    add_storage_commands(commands)
    add_insights_commands(commands)


SERVICE = Service(
    name="releases",
    schema="releases",
    migrations_package="forge_releases.migrations",
    setup=bind_options(setup, Options()),
    validate_world=world.validate,
    load_world=world.load,
    add_commands=add_commands,  # `forge release ...` is the client's: forge_publisher
    # replicas check each other's signed download URLs (docs/access.md "Update keys")
    secrets=("EVENTS_SECRET", "URL_SIGNING_SECRET"),
)

# this service alone in an application: tests, benchmarks (forge_common.app.ServiceApp)
create_app = ServiceApp(SERVICE, setup, Options)
