"""Return addresses after sign-in: only paths of this server, never an open redirect
(docs/accounts.md "Return addresses").

`redirect_to` (Gitea's parameter) is kept only when it is an absolute path of this server: it
starts with one `/`, names no scheme or host (`//evil`, `/\\evil`, `https:` are refused, since
browsers read a backslash as a slash), holds no control character or space (a header split, or
a trick of URL parsers) and is of sane length. Anything else becomes `/`.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from aiohttp import web

SIGN_IN_PATH = "/user/login"
MAX_LENGTH = 2000


def safe_return_path(value: str | None) -> str:
    if not value or len(value) > MAX_LENGTH or not value.startswith("/"):
        return "/"
    if value.startswith(("//", "/\\")) or "\\" in value:
        return "/"
    if not value.isprintable() or any(c.isspace() for c in value):
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        return "/"
    if value.startswith(SIGN_IN_PATH) or value.startswith("/user/logout"):
        return "/"  # no loop back to the sign-in
    return value


def sign_in_url(request: web.BaseRequest) -> str:
    """The sign-in page, returning here afterwards (a GET page only: a form post is not
    repeatable)."""
    here = request.rel_url.path_qs if request.method == "GET" else "/"
    target = safe_return_path(here)
    if target == "/":
        return SIGN_IN_PATH
    return f"{SIGN_IN_PATH}?redirect_to={quote(target, safe='/')}"
