"""GET/POST /user/login and POST /user/logout (Gitea's paths and form fields: `user_name`,
`password`, `_csrf`, `redirect_to`).

A sign-in is counted before its password is checked (forge_common.accounts.sign_in_throttle) and
checks the password even for a name nobody has (forge_common.accounts.passwords costs the same), so
neither the answer nor its timing tells an existing account from a missing one. A success starts a
new session (a new id, whatever cookie came in: no session fixation) and ends the one the browser
had.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.accounts import passwords, sign_in_throttle
from forge_common.accounts.sessions import (
    clear_session_cookie,
    cookie_of,
    end_session,
    session_of,
    set_session_cookie,
    start_session,
)
from forge_common.csrf import checked_form, csrf_token, text_field
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import page, page_response, see_other
from forge_common.pages.render import CHANGE_PASSWORD_PATH
from forge_common.pages.return_to import safe_return_path

from .queries import credentials, set_password_hash

WRONG = "Wrong user name or password."
TOO_LONG = f"A password has at most {passwords.MAX_LENGTH} characters."


def _form(
    request: web.Request,
    redirect_to: str,
    *,
    user_name: str = "",
    error: str = "",
    status: int = 200,
) -> web.Response:
    return page_response(
        request,
        "orgs/login.html",
        {
            "redirect_to": redirect_to,
            "user_name": user_name,
            "error": error,
            # bound to a pre-session cookie before sign-in (login CSRF), to the session after
            "csrf_token": csrf_token(request),
        },
        status=status,
        headers={"Cache-Control": "no-store"},
    )


@page
async def login_form(request: web.Request) -> web.StreamResponse:
    redirect_to = safe_return_path(request.query.get("redirect_to"))
    if session_of(request) is not None:
        raise web.HTTPSeeOther(redirect_to)
    return _form(request, redirect_to)


@page
async def login(request: web.Request) -> web.StreamResponse:
    form = await checked_form(request)
    name = text_field(form, "user_name").strip()
    password = text_field(form, "password")
    redirect_to = safe_return_path(text_field(form, "redirect_to"))
    pool, settings = request.app[DB_POOL], request.app[SETTINGS]
    if not name or not password:
        return _form(request, redirect_to, user_name=name, error=WRONG)
    if len(password) > passwords.MAX_LENGTH:
        # no password is this long: said plainly, never cut to a length that would match
        return _form(request, redirect_to, user_name=name, error=TOO_LONG, status=422)
    address = await sign_in_throttle.admit(request, name)
    user = await credentials(pool, name)
    stored = user.password_hash if user else None
    # verified whether or not the account exists (against a dummy hash when not): the same time
    matches = await passwords.verify_password(stored, password)
    if user is None or not matches:
        return _form(request, redirect_to, user_name=name, error=WRONG)
    await sign_in_throttle.forgive(pool, name, address)
    await sign_in_throttle.sweep(pool)
    if stored is not None and not user.must_change_password and passwords.needs_rehash(stored):
        # made under older hashing parameters: today's, now that we hold the password
        await set_password_hash(pool, user.id, await passwords.hash_password(password))
    old = cookie_of(request)
    if old is not None:
        await end_session(pool, old)
    secret = await start_session(pool, settings, user.id)
    target = CHANGE_PASSWORD_PATH if user.must_change_password else redirect_to
    response = see_other(target)
    set_session_cookie(response, settings, secret)
    return response


@page
async def logout(request: web.Request) -> web.StreamResponse:
    pool, settings = request.app[DB_POOL], request.app[SETTINGS]
    session = session_of(request)
    response = see_other("/")
    if session is None:
        # no live session here (it lapsed, or another site posted without the browser's cookie):
        # nothing to end, and nothing is touched, not even the cookie, which a forged post
        # could otherwise clear
        return response
    # a live session is ended only by a form of this site: a forged sign-out is refused
    await checked_form(request)
    await end_session(pool, session.secret)
    # pages seen while signed in leave the browser's cache ("cookies" would clear the whole
    # registrable domain's, other sites' of the same company included)
    response.headers["Clear-Site-Data"] = '"cache"'
    clear_session_cookie(response, settings)
    return response
