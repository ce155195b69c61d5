"""GET/POST /orgs/{org}/pinned/groups, PUT/DELETE /orgs/{org}/pinned/groups/{id}."""

from __future__ import annotations

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.body import read_json_object
from forge_common.db import connection
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from .. import payloads, render
from ..caching import cached_json
from ..context import org_for_read, org_for_write
from ..errors import PinGroupNotFound
from ..http import no_content
from ..overview.prepared import written
from ..pins import queries as pins_db
from ..visibility import filter_for_viewer
from . import grouping
from . import queries as groups_db


async def list_groups(request: web.Request) -> web.Response:
    viewer = viewer_of(request)
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        groups = await groups_db.list_groups(conn, view.org.id)
        pins = await pins_db.list_pins(conn, view.org.id)
        visible = await filter_for_viewer(conn, view, pins, groups)
    return cached_json(request, viewer, [render.group(g) for g in visible.groups])


async def create_group(request: web.Request) -> web.Response:
    await request.read()  # before taking a pooled connection: a slow client holds none
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        option = payloads.create_group(await read_json_object(request))
        group = await grouping.create(conn, view.org, actor.id, option)
    written(request, view.org.id)  # after the commit: read your own write
    return json_response(render.group(group), status=201)


def _group_id(request: web.Request) -> int:
    group_id = positive_int64(request.match_info["id"])
    if group_id is None:
        raise PinGroupNotFound()
    return group_id


async def update_group(request: web.Request) -> web.Response:
    await request.read()
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        group_id = _group_id(request)
        option = payloads.update_group(await read_json_object(request))
        group = await grouping.update(conn, view.org, actor.id, group_id, option)
    written(request, view.org.id)  # after the commit: read your own write
    return json_response(render.group(group))


async def delete_group(request: web.Request) -> web.Response:
    async with connection(request.app[DB_POOL]) as conn:
        view, actor = await org_for_write(conn, request.match_info["org"], viewer_of(request))
        await grouping.delete(conn, view.org, actor.id, _group_id(request))
    written(request, view.org.id)  # after the commit: read your own write
    return no_content()
