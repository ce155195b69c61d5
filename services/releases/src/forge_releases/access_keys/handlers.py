"""Create, list and revoke update keys: repository admins only (docs/releases.md "Update keys").

    POST   /api/v2/repos/{owner}/{repo}/update_keys            {"name": "..."} → 201, key shown once
    GET    /api/v2/repos/{owner}/{repo}/update_keys            → 200, the keys (never the secret)
    DELETE /api/v2/repos/{owner}/{repo}/update_keys/{key_id}   → 204; its signed URLs stop working

The repository is resolved as for publishing (404 / 401 first), then admin access is required
(403). The answers depend on the caller and are never stored (`Cache-Control: no-store`).
"""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access
from forge_common.audit import origin_of
from forge_common.auth import Viewer, viewer_of
from forge_common.body import read_json_object, required_str
from forge_common.errors import AuthTokenMissing
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.names import display_name_problem
from forge_common.render import json_response

from ..errors import InvalidField, NoPublishAccess, UpdateKeyNotFound
from ..models import RepoRef
from ..read.resolve import resolve
from . import changes, queries

_NO_STORE = {"Cache-Control": "no-store"}
_MAX_NAME = 100


async def admin_of(request: web.Request) -> tuple[RepoRef, Viewer]:
    """The repository and the caller, who must administer it (also the Tauri key's routes)."""
    resolved = await resolve(request)
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if resolved.access < Access.ADMIN:
        raise NoPublishAccess(Access.ADMIN)
    return resolved.ref, viewer


def key_name(value: str) -> str:
    name = value.strip()
    # the rule of every display name we store (forge_common.names)
    if not name.isprintable() or display_name_problem(name, max_length=_MAX_NAME):
        raise InvalidField("name", f"must be 1 to {_MAX_NAME} printable characters")
    return name


async def create_key(request: web.Request) -> web.Response:
    ref, viewer = await admin_of(request)
    name = key_name(required_str(await read_json_object(request), "name"))
    row, key = await changes.create(request.app[DB_POOL], ref, name, viewer, origin_of(request))
    body = {**queries.rendered(row), "creator": viewer.login, "key": key}
    return json_response(body, status=201, headers=_NO_STORE)


async def list_keys(request: web.Request) -> web.Response:
    ref, _ = await admin_of(request)
    rows = await queries.list_keys(request.app[DB_POOL], ref.repo_id)
    body = [{**queries.rendered(row), "creator": row["creator"]} for row in rows]
    return json_response(body, headers=_NO_STORE)


async def revoke_key(request: web.Request) -> web.Response:
    ref, _ = await admin_of(request)
    key_id = positive_int64(request.match_info["key_id"])
    pool, origin = request.app[DB_POOL], origin_of(request)
    if key_id is None or not await changes.revoke(pool, ref, key_id, origin):
        raise UpdateKeyNotFound()
    return web.Response(status=204, headers=_NO_STORE)
