"""`GET /-/console.js`: the console's one script, our own file, the same for everyone. `-` is
never an owner's name (names start with a letter or digit), so the path is free."""

from __future__ import annotations

from importlib.resources import files

from aiohttp import web
from forge_common.conditional import etag_of

_BODY = files(__package__).joinpath("static/console.js").read_bytes()
_HEADERS = {
    "Content-Type": "text/javascript; charset=utf-8",
    "Cache-Control": "public, max-age=300",
    "ETag": etag_of(_BODY),
    "X-Content-Type-Options": "nosniff",
}


async def console_script(request: web.Request) -> web.Response:
    if request.headers.get("If-None-Match") == _HEADERS["ETag"]:
        return web.Response(status=304, headers=_HEADERS)
    return web.Response(body=_BODY, headers=_HEADERS)
