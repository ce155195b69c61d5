"""`create_app(settings, options)`: this service alone in an application (tests, single-service
runs); `options` default to production's."""

from __future__ import annotations

import dataclasses
import functools

from aiohttp import web
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings

from .options import Options
from .service import SERVICE, setup


def create_app(settings: Settings, options: Options | None = None) -> web.Application:
    chosen = options if options is not None else Options()
    service = dataclasses.replace(SERVICE, setup=functools.partial(setup, options=chosen))
    return create_common_app(settings, [service])
