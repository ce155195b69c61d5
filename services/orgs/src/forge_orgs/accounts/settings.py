"""The signed-in user's settings pages (Gitea's paths and form fields):

- `/user/settings/applications`: access tokens, made through forge_common.accounts.tokens like the
  API's and `forge admin user generate-access-token`; a new token is shown once, on the answer to
  the post that made it (`Cache-Control: no-store`), and never again;
- `/user/settings/account`: change the password (`old_password`, `password`, `retype`);
- `/user/settings/change_password`: the new password a user must choose at first sign-in
  (`password`, `retype`).

Only a browser session reaches them (a token cannot: its forms would need a CSRF token bound to
a session), and every post is checked by forge_common.csrf. A new password ends every other
session of the user (forge_common.accounts.sessions.end_other_sessions).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.accounts import passwords, sign_in_throttle, tokens
from forge_common.accounts.sessions import Session, end_other_sessions, session_of
from forge_common.csrf import checked_form, text_field
from forge_common.errors import AuthTokenMissing
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL
from forge_common.pages import page, page_response, see_other

from .queries import password_hash_of, set_password_hash

APPLICATIONS = "/user/settings/applications"
NO_STORE = {"Cache-Control": "no-store"}
MAX_TOKEN_NAME = 255
# In Gitea's form order: each category's read or write.
SCOPE_CHOICES = [
    (category, [f"read:{category}", f"write:{category}"]) for category in tokens.SCOPE_CATEGORIES
]


def _signed_in(request: web.Request) -> Session:
    session = session_of(request)
    if session is None or session.must_change_password:
        raise AuthTokenMissing()  # the 401 page, with its sign-in link back here
    return session


async def _applications(
    request: web.Request,
    session: Session,
    *,
    new: tuple[tokens.AccessToken, str] | None = None,
    error: str = "",
    status: int = 200,
) -> web.Response:
    context: dict[str, Any] = {
        "tokens": await tokens.tokens_of(request.app[DB_POOL], session.viewer.id),
        "scope_choices": SCOPE_CHOICES,
        "new_token": new[0] if new else None,
        "new_secret": new[1] if new else "",
        "error": error,
    }
    return page_response(
        request, "orgs/applications.html", context, status=status, headers=NO_STORE
    )


@page
async def applications(request: web.Request) -> web.StreamResponse:
    return await _applications(request, _signed_in(request))


def _chosen_scopes(values: list[str]) -> tuple[str, ...]:
    chosen = [v for v in values if v in tokens.KNOWN_SCOPES]
    # the API's normalisation (write:X holds read:X, `all` holds everything), in a stable order
    return tokens.normalize_scopes(chosen)


@page
async def create_token(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    form = await checked_form(request)
    name = text_field(form, "name").strip()
    scopes = _chosen_scopes([v for v in form.getall("scope", []) if isinstance(v, str)])
    if not name or len(name) > MAX_TOKEN_NAME or not name.isprintable():
        error = f"Give the token a name of 1 to {MAX_TOKEN_NAME} characters."
        return await _applications(request, session, error=error, status=422)
    if not scopes:
        return await _applications(request, session, error="Choose at least one scope.", status=422)
    made = await tokens.create_token(request.app[DB_POOL], session.viewer.id, name, scopes)
    if made is None:
        error = "You already have a token of that name."
        return await _applications(request, session, error=error, status=422)
    return await _applications(request, session, new=made, status=201)


@page
async def delete_token(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    form = await checked_form(request)
    token_id = positive_int64(text_field(form, "id"))
    if token_id is not None:
        # someone else's id deletes nothing: the query names the user
        await tokens.delete_token(request.app[DB_POOL], session.viewer.id, token_id)
    return see_other(APPLICATIONS)


def _account(
    request: web.Request,
    template: str,
    *,
    error: str = "",
    notice: str = "",
    status: int = 200,
) -> web.Response:
    return page_response(
        request, template, {"error": error, "notice": notice}, status=status, headers=NO_STORE
    )


@page
async def account(request: web.Request) -> web.StreamResponse:
    _signed_in(request)
    return _account(request, "orgs/account.html")


def _new_password_problem(password: str, retype: str) -> str:
    if password != retype:
        return "The new passwords do not match."
    problem = passwords.password_problem(password)
    return f"The new password {problem}." if problem else ""


async def _set_password(request: web.Request, session: Session, password: str) -> None:
    pool = request.app[DB_POOL]
    await set_password_hash(pool, session.viewer.id, await passwords.hash_password(password))
    await end_other_sessions(pool, session.viewer.id, session.row_id)


@page
async def change_password(request: web.Request) -> web.StreamResponse:
    session = _signed_in(request)
    form = await checked_form(request)
    old = text_field(form, "old_password")
    if len(old) > passwords.MAX_LENGTH:
        error = f"A password has at most {passwords.MAX_LENGTH} characters."
        return _account(request, "orgs/account.html", error=error, status=422)
    # a check of the password like a sign-in, throttled like one (a stolen session must not
    # guess it at argon2's pace); 429 with Retry-After past the limits
    address = await sign_in_throttle.admit(request, session.viewer.login)
    pool = request.app[DB_POOL]
    if not await passwords.verify_password(await password_hash_of(pool, session.viewer.id), old):
        error = "The current password is wrong."
        return _account(request, "orgs/account.html", error=error, status=422)
    await sign_in_throttle.forgive(pool, session.viewer.login, address)
    password = text_field(form, "password")
    problem = _new_password_problem(password, text_field(form, "retype"))
    if problem:
        return _account(request, "orgs/account.html", error=problem, status=422)
    await _set_password(request, session, password)
    notice = "Your password is changed; every other session is signed out."
    return _account(request, "orgs/account.html", notice=notice)


def _must_change(request: web.Request) -> Session:
    session = session_of(request)
    if session is None:
        raise AuthTokenMissing()
    return session


@page
async def must_change_form(request: web.Request) -> web.StreamResponse:
    session = _must_change(request)
    if not session.must_change_password:
        return see_other("/user/settings/account")
    return _account(request, "orgs/change_password.html")


@page
async def must_change(request: web.Request) -> web.StreamResponse:
    session = _must_change(request)
    form = await checked_form(request)
    if not session.must_change_password:
        return see_other("/user/settings/account")
    password = text_field(form, "password")
    problem = _new_password_problem(password, text_field(form, "retype"))
    if problem:
        return _account(request, "orgs/change_password.html", error=problem, status=422)
    await _set_password(request, session, password)
    return see_other("/")
