"""Organizations and their members: `POST /orgs`, `GET /orgs/{org}`,
`DELETE /orgs/{org}/members/{username}`."""

from __future__ import annotations

from aiohttp import web
from forge_common.accounts import gitea_shapes
from forge_common.accounts import orgs as org_admin
from forge_common.accounts.users import user_by_name
from forge_common.auth import viewer_of
from forge_common.body import optional_str, read_json_object, required_str
from forge_common.db import connection, transaction
from forge_common.errors import PermissionDenied
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..accounts.api import NO_STORE, TargetNotFound, signed_in
from ..context import org_for_read
from ..http import base_url, no_content
from ..overview.prepared import written
from .common import org_account, owner_only, text_field


async def create_org(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    data = await read_json_object(request)
    name = required_str(data, "username")
    fields = {
        k: text_field(data, k) for k in ("full_name", "email", "description", "website", "location")
    }
    visibility = optional_str(data, "visibility") or "public"
    async with transaction(request.app[DB_POOL]) as conn:
        creator = await user_by_name(conn, viewer.login)
        if creator is None:
            raise PermissionDenied("user not allowed to create organizations")
        org = await org_admin.create_org(conn, creator, name=name, visibility=visibility, **fields)
    written(request, org.id)
    return json_response(
        gitea_shapes.organization(base_url(request), org), status=201, headers=NO_STORE
    )


async def get_org(request: web.Request) -> web.Response:
    """Gitea's `GET /orgs/{org}`: anyone who may see the organization (anonymous callers
    included, for a public one); hidden is missing."""
    viewer = viewer_of(request)
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        org = await org_account(conn, view)
    headers = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    return json_response(gitea_shapes.organization(base_url(request), org), headers=headers)


async def remove_member(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        owner_only(view)
        user = await user_by_name(conn, request.match_info["username"])
        if user is None:
            raise TargetNotFound()
        await org_admin.remove_member(conn, await org_account(conn, view), user, viewer.id)
    written(request, view.org.id)
    return no_content()
