"""Gitea's organization administration (docs/accounts.md): create organizations and
repositories, teams, team members and repositories, and remove organization members.

Checks in the order of every organization write (docs/access.md "The organization profile
API"): anonymous 401, an organization (or a team of one) the caller may not see 404 exactly as one
that does not exist, not an owner or site admin 403 with Gitea's words, then the body (400, 422),
then what it names (404, 422), then conflicts (409, 422). The rows are written by
`forge_common.accounts`, which records the events.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.accounts import gitea_shapes
from forge_common.accounts import orgs as org_admin
from forge_common.accounts import repos as repo_admin
from forge_common.accounts import teams as team_admin
from forge_common.accounts.models import Account, Repository
from forge_common.accounts.queries import account_by_name, repository_by_name
from forge_common.accounts.users import user_by_name
from forge_common.auth import Viewer, viewer_of
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

MAX_TEXT = 255
# a valid name no account may take (forge_common.accounts.users.RESERVED_NAMES)
NO_SUCH_ORG = "api"


def _text(data: Any, name: str) -> str:
    value = optional_str(data, name) or ""
    if len(value) > MAX_TEXT:
        raise Unprocessable(f"{name} must be at most {MAX_TEXT} characters", field=name)
    return value


async def _org(conn: Conn, view: OrgView) -> Account:
    account = await account_by_name(conn, view.org.name)
    if account is None:
        raise TargetNotFound()
    return account


def _owner_only(view: OrgView) -> None:
    if not view.can_manage:
        raise PermissionDenied("Must be an organization owner")  # Gitea's reqOrgOwnership


def _repo_json(
    request: web.Request, owner: Account, repo: Repository, viewer: Viewer
) -> dict[str, Any]:
    return gitea_shapes.repository(base_url(request), owner, repo, viewer, admin=True, push=True)


# --- organizations -------------------------------------------------------------------------


async def create_org(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    data = await read_json_object(request)
    name = required_str(data, "username")
    fields = {
        k: _text(data, k) for k in ("full_name", "email", "description", "website", "location")
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
        org = await _org(conn, view)
    headers = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    return json_response(gitea_shapes.organization(base_url(request), org), headers=headers)


async def remove_member(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        _owner_only(view)
        user = await user_by_name(conn, request.match_info["username"])
        if user is None:
            raise TargetNotFound()
        await org_admin.remove_member(conn, await _org(conn, view), user, viewer.id)
    written(request, view.org.id)
    return no_content()


# --- repositories --------------------------------------------------------------------------


def _repo_fields(data: Any) -> dict[str, Any]:
    name = required_str(data, "name")
    repo_admin.check_repo_name(name)
    description = optional_str(data, "description") or ""
    repo_admin.check_description(description)
    return {
        "name": name,
        "description": description,
        "private": bool(optional_bool(data, "private")),
    }


def _extras(data: Any) -> dict[str, Any]:
    """forge's own fields a creation may set at once (who may read a private repository's
    landing page and releases)."""
    extras = {}
    for name in ("public_landing", "public_releases"):
        flag = optional_bool(data, name)
        if flag:
            extras[name] = flag
    return extras


async def _create_repo(
    request: web.Request, conn: Conn, owner: Account, viewer: Viewer, data: Any
) -> web.Response:
    fields, extras = _repo_fields(data), _extras(data)
    repo = await repo_admin.create_repo(conn, owner, viewer.id, **fields)
    if extras:
        repo = await repo_admin.update_repo(conn, owner, repo, viewer.id, extras)
    return json_response(_repo_json(request, owner, repo, viewer), status=201, headers=NO_STORE)


async def create_user_repo(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    data = await read_json_object(request)
    async with transaction(request.app[DB_POOL]) as conn:
        owner = await user_by_name(conn, viewer.login)
        if owner is None:
            raise TargetNotFound()
        return await _create_repo(request, conn, owner, viewer, data)


async def create_org_repo(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    async with transaction(request.app[DB_POOL]) as conn:
        view = await org_for_read(conn, request.match_info["org"], viewer)
        if not view.can_manage:
            # Gitea's words (routers/api/v1/repo/repo.go CreateOrgRepo)
            raise PermissionDenied(
                "Given user is not allowed to create repository in organization."
            )
        data = await read_json_object(request)
        response = await _create_repo(request, conn, await _org(conn, view), viewer, data)
    written(request, view.org.id)
    return response


# --- teams ---------------------------------------------------------------------------------


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
        org = await _org(conn, view)
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
        _owner_only(view)
        data = await read_json_object(request)
        name = required_str(data, "name")
        description = _text(data, "description")
        # Gitea's Owners team: every repository of the organization, those made later too
        includes_all = bool(optional_bool(data, "includes_all_repositories"))
        org = await _org(conn, view)
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
        _owner_only(view)
    elif not (view.is_member or viewer.is_admin):
        raise PermissionDenied("Must be an organization member")
    return team, view, await _org(conn, view)


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
