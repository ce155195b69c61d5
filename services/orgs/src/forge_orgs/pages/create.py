"""Gitea's "New organization" (`/org/create`) and "New repository" (`/repo/create`) pages, with
Gitea's form fields: the same rows and checks as `POST /api/v1/orgs` and
`POST /api/v1/orgs/{org}/repos` (forge_common.accounts), for a signed-in browser session; every post
is checked by forge_common.csrf (docs/accounts.md "In the browser")."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.accounts import orgs as org_admin
from forge_common.accounts import repos as repo_admin
from forge_common.accounts.queries import account_by_name
from forge_common.accounts.sessions import Session, session_of
from forge_common.accounts.users import user_by_name
from forge_common.csrf import checked_form, text_field
from forge_common.db import transaction
from forge_common.errors import ApiError, AuthTokenMissing, Unprocessable
from forge_common.keys import DB_POOL
from forge_common.pages import page, page_response, see_other

from ..accounts.queries import OwnedOrg, orgs_owned_by
from ..overview.prepared import written

ORG_CREATE = "/org/create"
REPO_CREATE = "/repo/create"
NO_STORE = {"Cache-Control": "no-store"}
# Gitea's form values of an organization's visibility (modules/structs VisibleType)
VISIBILITIES = {"0": "public", "1": "limited", "2": "private"}
NOT_AN_OWNER = "Choose an owner you may create repositories for."


def _signed_in(request: web.Request) -> Session:
    session = session_of(request)
    if session is None or session.must_change_password:
        raise AuthTokenMissing()  # the 401 page, with its sign-in link back here
    return session


def _form_page(
    request: web.Request, template: str, context: dict[str, Any], status: int = 200
) -> web.Response:
    return page_response(request, template, context, status=status, headers=NO_STORE)


@page
async def org_form(request: web.Request) -> web.StreamResponse:
    _signed_in(request)
    return _form_page(request, "orgs/org_create.html", {"name": "", "visibility": "0"})


@page
async def create_org(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    form = await checked_form(request)
    name = text_field(form, "org_name").strip()
    chosen = text_field(form, "visibility") or "0"
    shown = {"name": name, "visibility": chosen}
    if chosen not in VISIBILITIES:
        shown["error"] = "Choose public, limited or private."
        return _form_page(request, "orgs/org_create.html", shown, status=422)
    try:
        async with transaction(request.app[DB_POOL]) as conn:
            creator = await user_by_name(conn, session.viewer.login)
            if creator is None:  # deleted while signed in
                raise AuthTokenMissing()
            org = await org_admin.create_org(
                conn, creator, name=name, visibility=VISIBILITIES[chosen]
            )
    except ApiError as error:
        if error.status not in (409, 422):
            raise
        shown["error"] = error.message  # the API's words: name taken, reserved or invalid
        return _form_page(request, "orgs/org_create.html", shown, status=error.status)
    written(request, org.id)
    return see_other(f"/{org.name}")


async def _owners(request: web.Request, session: Session) -> list[OwnedOrg]:
    """The user, then the organizations they own: where they may create a repository."""
    viewer = session.viewer
    owned = await orgs_owned_by(request.app[DB_POOL], viewer.id)
    return [OwnedOrg(viewer.id, viewer.login), *owned]


@page
async def repo_form(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    owners = await _owners(request, session)
    chosen = request.query.get("org", str(owners[0].id))  # Gitea's link from an organization
    context = {"owners": owners, "uid": chosen, "name": "", "description": "", "private": False}
    return _form_page(request, "orgs/repo_create.html", context)


@page
async def create_repo(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    form = await checked_form(request)
    owners = await _owners(request, session)
    shown: dict[str, Any] = {
        "owners": owners,
        "uid": text_field(form, "uid"),
        "name": text_field(form, "repo_name").strip(),
        "description": text_field(form, "description"),
        "private": text_field(form, "private") == "on",
    }
    owner = next((o for o in owners if str(o.id) == shown["uid"]), None)
    if owner is None:
        shown["error"] = NOT_AN_OWNER
        return _form_page(request, "orgs/repo_create.html", shown, status=422)
    try:
        async with transaction(request.app[DB_POOL]) as conn:
            account = await account_by_name(conn, owner.name)
            if account is None or account.id != owner.id:  # gone since the list was read
                raise Unprocessable(NOT_AN_OWNER)
            repo = await repo_admin.create_repo(
                conn,
                account,
                session.viewer.id,
                name=shown["name"],
                description=shown["description"],
                private=shown["private"],
            )
    except ApiError as error:
        if error.status not in (409, 422):
            raise
        shown["error"] = error.message
        return _form_page(request, "orgs/repo_create.html", shown, status=error.status)
    if account.is_org:
        written(request, account.id)
    return see_other(f"/{account.name}/{repo.name}")
