"""GET /orgs/{org}/overview and the public member endpoints."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.auth import viewer_of
from forge_common.db import connection
from forge_common.keys import DB_POOL
from forge_common.names import is_account_name

from .. import membership, render
from ..caching import cached_json
from ..context import org_for_read, require_signed_in, require_visible
from ..db import members as members_db
from ..db import overview as overview_db
from ..errors import OrgNotFound
from ..models import OrgView
from ..visibility import filter_for_viewer
from .common import base_url, no_content


async def overview_body(request: web.Request) -> dict[str, Any]:
    """The overview of `{org}` as the viewer may see it: one query for everything, plus at most
    one bulk access decision, whatever the size. The API and the organization page share it."""
    viewer = viewer_of(request)
    name = request.match_info["org"]
    async with connection(request.app[DB_POOL]) as conn:
        data = None
        if is_account_name(name):
            data = await overview_db.overview(conn, name, viewer.id if viewer else None)
        if data is None:
            raise OrgNotFound()
        view = require_visible(OrgView(data.org, viewer, data.role))
        visible = await filter_for_viewer(conn, view, data.pins, data.groups, data.stats)
    base = base_url(request)
    return {
        "organization": render.organization(base, view.org),
        "pinned_repos": render.pins(base, view.org, visible.pins),
        "pinned_groups": [render.group(g) for g in visible.groups],
        "public_members": [render.public_member(base, m) for m in data.members],
        "total_members": data.stats.public_member_count,
        "stats": render.stats(data.stats, visible.readable_repo_count, is_member=view.is_member),
    }


async def overview(request: web.Request) -> web.Response:
    return cached_json(request, viewer_of(request), await overview_body(request))


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
    return no_content()


async def publicize_member(request: web.Request) -> web.Response:
    return await _set_public(request, True)


async def conceal_member(request: web.Request) -> web.Response:
    return await _set_public(request, False)
