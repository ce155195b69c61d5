"""Repositories made in Gitea's shapes: `POST /user/repos`, `POST /orgs/{org}/repos`."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.accounts import gitea_shapes
from forge_common.accounts import repos as repo_admin
from forge_common.accounts.models import Account, Repository
from forge_common.accounts.users import user_by_name
from forge_common.auth import Viewer
from forge_common.body import optional_bool, optional_str, read_json_object, required_str
from forge_common.db import Conn, transaction
from forge_common.errors import PermissionDenied
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..accounts.api import NO_STORE, TargetNotFound, signed_in
from ..context import org_for_read
from ..http import base_url
from ..overview.prepared import written
from .common import org_account


def _repo_json(
    request: web.Request, owner: Account, repo: Repository, viewer: Viewer
) -> dict[str, Any]:
    return gitea_shapes.repository(base_url(request), owner, repo, viewer, admin=True, push=True)


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
        response = await _create_repo(request, conn, await org_account(conn, view), viewer, data)
    written(request, view.org.id)
    return response
