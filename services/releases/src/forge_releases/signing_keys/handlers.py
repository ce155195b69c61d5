"""A repository's signing key of each kind (kinds.py), at `/api/v2/repos/{owner}/{repo}/<kind>`;
for Tauri (docs/releases.md "Tauri public key"):

    GET    /api/v2/repos/{owner}/{repo}/tauri_key   → 200 the key; 404 TauriKeyNotFound
    PUT    /api/v2/repos/{owner}/{repo}/tauri_key   {"public_key": "..."} → 200 (admins)
    DELETE /api/v2/repos/{owner}/{repo}/tauri_key   → 204 (admins)

Whoever can read the repository can read its public key (it ships inside every app anyway); setting
and removing it needs admin access, resolved as for update keys (404 / 401 first, then 403).
Setting a key does not re-check the pairs already uploaded; it applies to uploads from then on.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.audit import origin_of
from forge_common.body import read_json_object, required_str
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..access_keys.handlers import admin_of
from ..errors import InvalidField
from ..read.resolve import resolve
from . import changes, queries
from .kinds import KeyKind

_NO_STORE = {"Cache-Control": "no-store"}


def _rendered(kind: KeyKind, row: dict[str, Any]) -> dict[str, Any]:
    return {
        **kind.parse(row["public_key"]).shown,
        "updated_at": row["updated_at"],
        "updated_by": row["updated_by"],
    }


def routes_of(kind: KeyKind) -> list[web.RouteDef]:
    """GET (readers), PUT and DELETE (admins) of the repository's key of `kind`."""

    async def get_key(request: web.Request) -> web.Response:
        ref = (await resolve(request)).ref
        row = await queries.key_of(request.app[DB_POOL], ref.repo_id, kind.name)
        if row is None:
            raise kind.not_found()
        return json_response(_rendered(kind, row), headers=_NO_STORE)

    async def set_key(request: web.Request) -> web.Response:
        ref, viewer = await admin_of(request)
        text = required_str(await read_json_object(request), "public_key")
        try:
            key = kind.parse(text)
        except ValueError as exc:
            raise InvalidField("public_key", str(exc)) from None
        pool = request.app[DB_POOL]
        updated_at = await changes.set_key(pool, ref, kind, key, viewer, origin_of(request))
        row = {"public_key": key.stored, "updated_at": updated_at, "updated_by": viewer.login}
        return json_response(_rendered(kind, row), headers=_NO_STORE)

    async def delete_key(request: web.Request) -> web.Response:
        ref, _ = await admin_of(request)
        if not await changes.remove(request.app[DB_POOL], ref, kind, origin_of(request)):
            raise kind.not_found()
        return web.Response(status=204, headers=_NO_STORE)

    return [
        web.get(kind.path, get_key),
        web.put(kind.path, set_key),
        web.delete(kind.path, delete_key),
    ]
