"""The releases service as the `forge` CLI and `forge serve` see it."""

from __future__ import annotations

from aiohttp import web
from forge_common.config import Settings
from forge_common.service import Service

from . import world
from .routes import add_routes


def setup(app: web.Application, settings: Settings) -> None:
    add_routes(app)


SERVICE = Service(
    name="releases",
    schema="releases",
    migrations_package="forge_releases.migrations",
    setup=setup,
    validate_world=world.validate,
    load_world=world.load,
)
