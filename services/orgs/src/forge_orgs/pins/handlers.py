"""GET/POST /orgs/{org}/pinned, DELETE /orgs/{org}/pinned/{repo}, PUT .../pinned/reorder."""

from __future__ import annotations

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.body import read_json_object
from forge_common.db import connection
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from .. import payloads, render
from ..caching import cached_json
from ..context import org_for_read, org_for_write
from ..http import base_url, no_content
from ..overview.prepared import written
from ..visibility import filter_for_viewer
from . import pinning
from . import queries as pins_db


async def list_pins(request: web.Request) -> web.Response:
    viewer = viewer_of(request)
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        pins = await pins_db.list_pins(conn, view.org.id)
        visible = await filter_for_viewer(conn, view, pins, [])
    base = base_url(request)
    return cached_json(request, viewer, render.pins(base, view.org, visible.pins))


async def add_pin(request: web.Request) -> web.Response:
    await request.read()  # before taking a pooled connection: a slow client holds none
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        option = payloads.add_pin(await read_json_object(request))
        created = await pinning.pin(conn, view.org, actor.id, option)
    written(request, view.org.id)  # after the commit: read your own write
    return json_response(render.pin(base_url(request), view.org, created), status=201)


async def remove_pin(request: web.Request) -> web.Response:
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        await pinning.unpin(conn, view.org, actor.id, request.match_info["repo"])
    written(request, view.org.id)  # after the commit: read your own write
    return no_content()


async def reorder_pins(request: web.Request) -> web.Response:
    await request.read()  # before taking a pooled connection: a slow client holds none
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        orders = payloads.reorder(await read_json_object(request))
        await pinning.reorder(conn, view.org, actor.id, orders)
    written(request, view.org.id)  # after the commit: read your own write
    return no_content()
