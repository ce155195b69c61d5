"""GET /orgs/{org}/overview and the public member endpoints."""

from __future__ import annotations

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.db import connection
from forge_common.keys import DB_POOL

from .. import render
from ..caching import cached_body, cached_json
from ..context import org_for_read, require_signed_in
from ..http import base_url, no_content
from ..overview.prepared import prepared_overview, written
from . import membership
from . import queries as members_db


async def overview(request: web.Request) -> web.Response:
    """From the overview cache when the viewer's class has an answer (overview.py)."""
    viewer = viewer_of(request)
    prepared = await prepared_overview(request.app, request.match_info["org"], viewer)
    return cached_body(request, viewer, prepared.json)


async def public_member_roles(request: web.Request) -> web.Response:
    """Every public member with role; `page` and `limit` are accepted and ignored
    (docs/orgs.md "Endpoints")."""
    viewer = viewer_of(request)
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        members = await members_db.public_members(conn, view.org.id)
    base = base_url(request)
    headers = {
        "X-Total-Count": str(len(members)),
        "Access-Control-Expose-Headers": "X-Total-Count",
    }
    return cached_json(request, viewer, [render.public_member(base, m) for m in members], headers)


async def _set_public(request: web.Request, public: bool) -> web.Response:
    actor = require_signed_in(viewer_of(request))
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], actor)
        await membership.set_visibility(conn, view, actor, request.match_info["username"], public)
    written(request, view.org.id)  # after the commit: read your own write
    return no_content()


async def publicize_member(request: web.Request) -> web.Response:
    return await _set_public(request, True)


async def conceal_member(request: web.Request) -> web.Response:
    return await _set_public(request, False)
