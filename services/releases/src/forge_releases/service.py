"""The releases service as the `forge` CLI and `forge serve` see it."""

from __future__ import annotations

from aiohttp import web
from forge_common.config import Settings
from forge_common.service import Service

from . import cli_publish, world
from .cache import ReleaseCache
from .counter import DownloadCounter
from .keys import DOWNLOAD_COUNTER, LISTENER_TUNING, RELEASE_CACHE, STORAGE
from .lifecycle import counter_context, listener_context
from .listener import ListenerTuning
from .routes import add_routes
from .storage import Storage
from .uploads import sweep_on_startup


def setup(app: web.Application, settings: Settings) -> None:
    app[RELEASE_CACHE] = ReleaseCache()
    app[LISTENER_TUNING] = ListenerTuning()  # tests may replace it before the app starts
    app[DOWNLOAD_COUNTER] = DownloadCounter()
    app[STORAGE] = Storage(settings.storage_path)
    app.cleanup_ctx.append(listener_context)
    app.cleanup_ctx.append(counter_context)
    app.on_startup.append(sweep_on_startup)  # temporary files of uploads cut off by a crash
    add_routes(app)


SERVICE = Service(
    name="releases",
    schema="releases",
    migrations_package="forge_releases.migrations",
    setup=setup,
    validate_world=world.validate,
    load_world=world.load,
    add_commands=cli_publish.add_commands,
)
