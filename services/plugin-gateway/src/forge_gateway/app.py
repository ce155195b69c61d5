"""`create_app(settings)`: this service alone in an application (tests, single-service runs)."""

from __future__ import annotations

import dataclasses

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings

from .options import Options
from .service import SERVICE, make_setup


def create_app(settings: Settings, options: Options | None = None) -> web.Application:
    service = (
        SERVICE if options is None else dataclasses.replace(SERVICE, setup=make_setup(options))
    )
    return create_common_app(settings, [service])
