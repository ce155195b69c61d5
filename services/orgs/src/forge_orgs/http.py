"""Small helpers every handler uses."""

from __future__ import annotations

from aiohttp import web
from forge_common.keys import SETTINGS


def base_url(request: web.Request) -> str:
    return request.app[SETTINGS].app_url


def no_content() -> web.Response:
    return web.Response(status=204)
