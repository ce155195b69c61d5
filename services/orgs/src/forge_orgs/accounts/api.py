"""Gitea's user and token administration (docs/accounts.md): `POST /api/v1/admin/users`,
`GET /api/v1/user`, `GET`/`POST /api/v1/users/{username}/tokens` and
`DELETE /api/v1/users/{username}/tokens/{token}`.

Token routes want basic authentication with the user's password, as Gitea's
(reqBasicOrRevProxyAuth): a token, even sent as a basic password, cannot make more tokens.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.accounts import gitea_shapes, tokens, users
from forge_common.accounts.models import Account
from forge_common.accounts.passwords import hash_password, password_problem
from forge_common.auth import BY_PASSWORD, Viewer, viewer_of
from forge_common.body import (
    optional_bool,
    optional_list,
    optional_str,
    read_json_object,
    required_str,
)
from forge_common.db import transaction
from forge_common.errors import (
    AuthTokenMissing,
    InvalidInput,
    NotFound,
    PermissionDenied,
    Unprocessable,
)
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..http import base_url

NO_STORE = {"Cache-Control": "no-store"}


class TargetNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("The target couldn't be found.")  # Gitea's ctx.NotFound()


def signed_in(request: web.Request) -> Viewer:
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing("token is required")  # Gitea's reqToken
    return viewer


async def _account(request: web.Request, viewer: Viewer) -> Account:
    account = await users.user_by_name(request.app[DB_POOL], viewer.login)
    if account is None:  # deleted while the request ran
        raise AuthTokenMissing("token is required")
    return account


async def create_user(request: web.Request) -> web.Response:
    viewer = _site_admin(request)
    data = await read_json_object(request)
    name = required_str(data, "username")
    email = required_str(data, "email")
    password = required_str(data, "password")
    full_name = optional_str(data, "full_name") or ""
    must_change = optional_bool(data, "must_change_password")
    if optional_bool(data, "restricted"):
        raise Unprocessable("restricted users are not supported", field="restricted")
    problem = password_problem(password)
    if problem is not None:
        raise InvalidInput(f"password {problem}")  # Gitea answers 400 for a weak password
    users.check_name(name)
    users.check_email(email)
    password_hash = await hash_password(password)
    async with transaction(request.app[DB_POOL]) as conn:
        account = await users.create_user(
            conn,
            name=name,
            email=email,
            password_hash=password_hash,
            full_name=full_name,
            # Gitea's API default: a user made for someone else changes the password first
            must_change_password=True if must_change is None else must_change,
        )
    data_out = gitea_shapes.user(base_url(request), account, viewer)
    return json_response(data_out, status=201, headers=NO_STORE)


def _site_admin(request: web.Request) -> Viewer:
    viewer = signed_in(request)
    if not viewer.is_admin:
        raise PermissionDenied("user should be the site admin")  # Gitea's reqSiteAdmin
    return viewer


async def _user_of_path(request: web.Request) -> Account:
    user = await users.user_by_name(request.app[DB_POOL], request.match_info["username"])
    if user is None:
        raise TargetNotFound()
    return user


async def edit_user(request: web.Request) -> web.Response:
    """Gitea's `PATCH /admin/users/{username}` (EditUserOption): only the fields given change."""
    viewer = _site_admin(request)
    user = await _user_of_path(request)
    data = await read_json_object(request)
    changes: dict[str, object] = {}
    for field in ("email", "full_name", "website", "location", "description"):
        value = optional_str(data, field)
        if value is not None:
            if len(value) > 255:
                raise Unprocessable(f"{field} must be at most 255 characters", field=field)
            changes[field] = value
    admin = optional_bool(data, "admin")
    if admin is not None:
        changes["is_admin"] = admin
    must_change = optional_bool(data, "must_change_password")
    if must_change is not None:
        changes["must_change_password"] = must_change
    password = optional_str(data, "password")
    if password:  # Gitea: an empty password leaves it as it was
        problem = password_problem(password)
        if problem is not None:
            raise InvalidInput(f"password {problem}")
        changes["password_hash"] = await hash_password(password)
    async with transaction(request.app[DB_POOL]) as conn:
        updated = await users.update_user(conn, user, changes)
    return json_response(gitea_shapes.user(base_url(request), updated, viewer), headers=NO_STORE)


async def delete_user(request: web.Request) -> web.Response:
    """Gitea's `DELETE /admin/users/{username}[?purge=true]`: a user who owns repositories only
    with purge (they go too); the last owner of an organization never."""
    _site_admin(request)
    user = await _user_of_path(request)
    purge = request.query.get("purge", "").lower() == "true"
    async with transaction(request.app[DB_POOL]) as conn:
        await users.delete_user(conn, user, purge=purge)
    return web.Response(status=204)


async def current_user(request: web.Request) -> web.Response:
    viewer = signed_in(request)
    account = await _account(request, viewer)
    data = gitea_shapes.user(base_url(request), account, viewer)
    return json_response(
        data, headers={"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    )


async def version(request: web.Request) -> web.Response:
    """Gitea's `GET /version`, which its clients call before anything else."""
    body = {"version": gitea_shapes.GITEA_API_VERSION}
    return json_response(body, headers={"Cache-Control": "public, max-age=60"})


async def get_user(request: web.Request) -> web.Response:
    """Gitea's `GET /users/{username}`: users are public (docs/access.md "Seeing an owner")."""
    user = await users.user_by_name(request.app[DB_POOL], request.match_info["username"])
    if user is None:
        raise TargetNotFound()
    data = gitea_shapes.user(base_url(request), user, viewer_of(request))
    return json_response(
        data, headers={"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    )


async def _token_owner(request: web.Request) -> tuple[Viewer, Account]:
    """Gitea's order: basic auth with a password (401), the user in the path (404), the caller
    is that user or a site admin (403)."""
    viewer = viewer_of(request)
    if viewer is None or viewer.method != BY_PASSWORD:
        raise AuthTokenMissing("auth required")  # Gitea's reqBasicOrRevProxyAuth
    owner = await users.user_by_name(request.app[DB_POOL], request.match_info["username"])
    if owner is None:
        raise TargetNotFound()
    if owner.id != viewer.id and not viewer.is_admin:
        raise PermissionDenied("doer should be the site admin or the context user")
    return viewer, owner


async def list_tokens(request: web.Request) -> web.Response:
    _, owner = await _token_owner(request)
    found = await tokens.tokens_of(request.app[DB_POOL], owner.id)
    headers = {**NO_STORE, "X-Total-Count": str(len(found))}
    return json_response([gitea_shapes.access_token(t) for t in found], headers=headers)


async def create_token(request: web.Request) -> web.Response:
    _, owner = await _token_owner(request)
    data = await read_json_object(request)
    name = required_str(data, "name").strip()
    if not name or len(name) > 255 or not name.isprintable():
        raise Unprocessable("name must be 1 to 255 printable characters", field="name")
    wanted = optional_list(data, "scopes") or []
    if not all(isinstance(s, str) for s in wanted):
        raise Unprocessable("scopes must be a list of strings", field="scopes")
    try:
        scopes = tokens.normalize_scopes(wanted)
    except tokens.ScopeError as exc:
        raise InvalidInput(str(exc)) from None
    if not scopes:
        raise InvalidInput("access token must have a scope")
    made = await tokens.create_token(request.app[DB_POOL], owner.id, name, scopes)
    if made is None:
        raise InvalidInput("access token name has been used already")
    token, secret = made
    return json_response(gitea_shapes.access_token(token, secret), status=201, headers=NO_STORE)


async def delete_token(request: web.Request) -> web.Response:
    _, owner = await _token_owner(request)
    which = request.match_info["token"]
    key: int | str = positive_int64(which) or which  # Gitea: an id, else a token's name
    if not await tokens.delete_token(request.app[DB_POOL], owner.id, key):
        raise TargetNotFound()
    return web.Response(status=204)
