"""Teams of an organization, their members and repositories: `GET`/`POST /orgs/{org}/teams`,
`GET /teams/{id}`, `PUT`/`DELETE /teams/{id}/members/{username}` and
`/teams/{id}/repos/{org}/{repo}`."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.accounts import gitea_shapes
from forge_common.accounts import teams as team_admin
from forge_common.accounts.models import Account
from forge_common.accounts.queries import repository_by_name
from forge_common.accounts.users import user_by_name
from forge_common.auth import Viewer
from forge_common.body import optional_bool, optional_str, read_json_object, required_str
from forge_common.db import Conn, connection, transaction
from forge_common.errors import PermissionDenied, Unprocessable
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.names import is_repo_name
from forge_common.render import json_response

from ..accounts.api import NO_STORE, TargetNotFound, signed_in
from ..context import org_for_read
from ..errors import OrgNotFound
from ..http import base_url, no_content
from ..models import OrgView
from ..overview.prepared import written
from .common import org_account, owner_only, text_field

# a valid name no account may take (forge_common.accounts.users.RESERVED_NAMES)
NO_SUCH_ORG = "api"


def _team_json(request: web.Request, team: team_admin.Team, org: Account) -> dict[str, Any]:
    return gitea_shapes.team(
        base_url(request),
        team.id,
        team.name,
        team.description,
        team.permission,
        org,
        team.includes_all_repositories,
    )


async def list_teams(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    async with connection(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        if not (view.is_member or viewer.is_admin):
            raise PermissionDenied("Must be an organization member")  # Gitea's reqOrgMembership
        org = await org_account(conn, view)
        found = await team_admin.teams_of(conn, org.id)
    headers = {
        "Cache-Control": "private, no-cache",
        "Vary": "Authorization",
        "X-Total-Count": str(len(found)),
    }
    return json_response([_team_json(request, t, org) for t in found], headers=headers)


def _permission(data: Any) -> str:
    permission = optional_str(data, "permission")
    if permission is None:
        # Gitea 1.2x sends units_map instead: the strongest unit's access is the team's
        units = data.get("units_map")
        levels = (
            [v for v in units.values() if v in team_admin.PERMISSIONS]
            if isinstance(units, dict)
            else []
        )
        order = {p: i for i, p in enumerate(team_admin.PERMISSIONS)}
        permission = max(levels, key=order.__getitem__) if levels else "read"
    if permission not in team_admin.PERMISSIONS:
        raise Unprocessable("permission must be one of read, write, admin", field="permission")
    return permission


async def create_team(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        owner_only(view)
        data = await read_json_object(request)
        name = required_str(data, "name")
        description = text_field(data, "description")
        # Gitea's Owners team: every repository of the organization, those made later too
        includes_all = bool(optional_bool(data, "includes_all_repositories"))
        org = await org_account(conn, view)
        team = await team_admin.create_team(
            conn,
            org,
            viewer.id,
            name=name,
            description=description,
            permission=_permission(data),
            includes_all_repositories=includes_all,
        )
    written(request, org.id)
    return json_response(_team_json(request, team, org), status=201, headers=NO_STORE)


async def _team_for(
    conn: Conn, request: web.Request, viewer: Viewer, *, owners_only: bool = True
) -> tuple[team_admin.Team, OrgView, Account]:
    """The team of `{id}`: a team of an organization the caller may not see is 404 exactly as a
    team that does not exist."""
    raw = request.match_info["id"]
    # the same two queries whether the team exists or not: a junk id looks up team 0, a missing
    # team a name no account can have, so neither status, body nor time tells them apart
    found = await team_admin.team_with_org_name(conn, positive_int64(raw) or 0)
    try:
        view = await org_for_read(conn, found[1] if found else NO_SUCH_ORG, viewer)
    except OrgNotFound:
        raise TargetNotFound() from None
    if found is None:
        raise TargetNotFound()
    team = found[0]
    if owners_only:
        owner_only(view)
    elif not (view.is_member or viewer.is_admin):
        raise PermissionDenied("Must be an organization member")
    return team, view, await org_account(conn, view)


async def get_team(request: web.Request) -> web.Response:
    """Gitea's `GET /teams/{id}`: members of the organization and site admins."""
    viewer = signed_in(request)
    async with connection(request.app[DB_POOL]) as conn:
        team, _, org = await _team_for(conn, request, viewer, owners_only=False)
    headers = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    return json_response(_team_json(request, team, org), headers=headers)


async def _team_member(request: web.Request, present: bool) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        team, view, org = await _team_for(conn, request, viewer)
        user = await user_by_name(conn, request.match_info["username"])
        if user is None:
            raise TargetNotFound()
        if present:
            await team_admin.add_team_member(conn, org, team, user, viewer.id)
        else:
            await team_admin.remove_team_member(conn, org, team, user, viewer.id)
    written(request, view.org.id)
    return no_content()


async def add_team_member(request: web.Request) -> web.Response:
    return await _team_member(request, True)


async def remove_team_member(request: web.Request) -> web.Response:
    return await _team_member(request, False)


async def _team_repo(request: web.Request, present: bool) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        team, view, org = await _team_for(conn, request, viewer)
        name = request.match_info["repo"]
        repo = None
        if request.match_info["org"].lower() == org.name.lower() and is_repo_name(name):
            repo = await repository_by_name(conn, org.id, name)
        if repo is None:
            raise TargetNotFound()
        await team_admin.set_team_repo(conn, team, repo, present=present)
    written(request, view.org.id)
    return no_content()


async def add_team_repo(request: web.Request) -> web.Response:
    return await _team_repo(request, True)


async def remove_team_repo(request: web.Request) -> web.Response:
    return await _team_repo(request, False)
