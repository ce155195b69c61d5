"""Gitea's repository administration on `/api/v1/repos/{owner}/{repo}` (docs/accounts.md):
`PATCH` (edit: name, description, private, archived, and forge's public_landing and
public_releases), `DELETE`, and `PUT`/`DELETE .../collaborators/{collaborator}`.

Order, as every write of the release API (docs/access.md "Writes on the release API"): the
repository is resolved exactly as a read (a repository the caller may not read is 404, as one that
does not exist), then anonymous 401, then too little access 403 with Gitea's words, then the body
(422), then what it names. The core rows are written by `forge_common.accounts.repos`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.access import Access, access_facts
from forge_common.accounts import gitea_shapes
from forge_common.accounts import repos as repo_admin
from forge_common.accounts.models import Account, Repository
from forge_common.accounts.queries import account_by_name, repository_by_name
from forge_common.accounts.users import user_by_name
from forge_common.auth import Viewer, viewer_of
from forge_common.body import optional_bool, optional_str, read_json_object
from forge_common.db import transaction
from forge_common.errors import AuthTokenMissing, PermissionDenied, RepoNotFound, Unprocessable
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import json_response

from ..keys import RELEASE_CACHE
from ..models import Resolved
from ..publish.writes import collect_garbage
from ..read.resolve import resolve


async def _resolved(request: web.Request) -> tuple[Resolved, Viewer]:
    resolved = await resolve(request)  # 404 / 401 as on the read side
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    return resolved, viewer


def _changed(request: web.Request, repo_id: int) -> None:
    """After the commit: this process answers the new state at once (read your own write); the
    others hear the triggers' NOTIFY (read/cache.py)."""
    cache = request.app[RELEASE_CACHE]
    cache.invalidate_names()
    cache.invalidate_repo(repo_id)


def _require_admin(resolved: Resolved) -> None:
    if resolved.access < Access.ADMIN:
        # Gitea's words (routers/api/v1/api.go reqAdmin)
        raise PermissionDenied(
            "user should be an owner or a collaborator with admin write of a repository"
        )


async def repository_rows(request: web.Request, resolved: Resolved) -> tuple[Account, Repository]:
    """The owner's and the repository's rows of a resolved repository (404 if gone since)."""
    pool = request.app[DB_POOL]
    owner = await account_by_name(pool, resolved.ref.owner)
    repo = None if owner is None else await repository_by_name(pool, owner.id, resolved.ref.name)
    if owner is None or repo is None:  # gone since it was resolved
        raise RepoNotFound()
    return owner, repo


def _edits(data: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for name in ("name", "description"):
        value = optional_str(data, name)
        if value is not None:
            changes[name] = value
    for name in ("private", "archived", "public_landing", "public_releases"):
        flag = optional_bool(data, name)
        if flag is not None:
            changes[name] = flag
    if "name" in changes:
        repo_admin.check_repo_name(changes["name"])
    if "description" in changes:
        repo_admin.check_description(changes["description"])
    return changes


async def edit_repository(
    request: web.Request, resolved: Resolved, viewer: Viewer, changes: dict[str, Any]
) -> tuple[Account, Repository]:
    """The one write of a repository's settings, validated by the caller: Gitea's `PATCH` and
    the console's settings page. Its event, and every replica's cache told."""
    owner, repo = await repository_rows(request, resolved)
    async with transaction(request.app[DB_POOL]) as conn:
        repo = await repo_admin.update_repo(conn, owner, repo, viewer.id, changes)
    _changed(request, repo.id)
    return owner, repo


async def edit_repo(request: web.Request) -> web.Response:
    resolved, viewer = await _resolved(request)
    _require_admin(resolved)
    changes = _edits(dict(await read_json_object(request)))
    owner, repo = await edit_repository(request, resolved, viewer, changes)
    data = gitea_shapes.repository(
        request.app[SETTINGS].app_url, owner, repo, viewer, admin=True, push=True
    )
    return json_response(data, headers={"Cache-Control": "no-store"})


async def delete_repo(request: web.Request) -> web.Response:
    resolved, viewer = await _resolved(request)
    pool = request.app[DB_POOL]
    facts = (await access_facts(pool, viewer, [resolved.ref.repo_id])).get(resolved.ref.repo_id)
    is_owner = facts is not None and (
        viewer.is_admin or viewer.id == facts.owner_id or facts.member_role == "owner"
    )
    if not is_owner:
        raise PermissionDenied("user should be the owner of the repo")  # Gitea's reqOwner
    owner, repo = await repository_rows(request, resolved)
    async with transaction(pool) as conn:
        digests = await conn.fetch(
            """SELECT a.sha256 FROM releases.assets a
                 JOIN releases.releases r ON r.id = a.release_id WHERE r.repo_id = $1""",
            repo.id,
        )
        await repo_admin.delete_repo(conn, owner, repo, viewer.id)
    _changed(request, repo.id)
    # the rows went with the repository (ON DELETE CASCADE); their files when nobody shares them
    await collect_garbage(request.app, {row["sha256"] for row in digests})
    return web.Response(status=204)


async def _collaborator(request: web.Request) -> Account:
    name = request.match_info["collaborator"]
    user = await user_by_name(request.app[DB_POOL], name)
    if user is None:
        # Gitea answers 422 with its error text (users are public: nothing is revealed)
        raise Unprocessable(f"user does not exist [uid: 0, name: {name}]")
    return user


async def add_collaborator(request: web.Request) -> web.Response:
    resolved, viewer = await _resolved(request)
    _require_admin(resolved)
    data = await read_json_object(request) if request.body_exists else {}
    permission = optional_str(data, "permission") or "write"  # Gitea's default
    if permission not in repo_admin.COLLABORATOR_PERMISSIONS:
        raise Unprocessable("permission must be one of read, write, admin", field="permission")
    owner, repo = await repository_rows(request, resolved)
    user = await _collaborator(request)
    if user.id == owner.id:
        raise Unprocessable("the owner of a repository cannot be its collaborator")
    async with transaction(request.app[DB_POOL]) as conn:
        await repo_admin.set_collaborator(conn, owner, repo, user, permission, viewer.id)
    _changed(request, repo.id)
    return web.Response(status=204)


async def remove_collaborator(request: web.Request) -> web.Response:
    resolved, viewer = await _resolved(request)
    _require_admin(resolved)
    owner, repo = await repository_rows(request, resolved)
    user = await _collaborator(request)
    async with transaction(request.app[DB_POOL]) as conn:
        await repo_admin.remove_collaborator(conn, owner, repo, user, viewer.id)
    _changed(request, repo.id)
    return web.Response(status=204)
