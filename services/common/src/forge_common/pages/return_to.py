"""Return addresses after sign-in: only paths of this server, never an open redirect
(docs/accounts.md "Return addresses").

`redirect_to` (Gitea's parameter) is kept only when it is an absolute path of this server: it
starts with one `/`, names no scheme or host (`//evil`, `/\\evil`, `https:` are refused, since
browsers read a backslash as a slash), holds no control character or space (a header split, or
a trick of URL parsers) and is of sane length. Anything else becomes `/`.

A return address never carries a credential: query parameters that authorise a read (an update
key, a signed URL's parts, a token) are taken out, so a page opened with `?key=forge_uk_...` does
not put the key into its sign-in link, the sign-in form or the `Location` after sign-in.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from aiohttp import web

SIGN_IN_PATH = "/user/login"
MAX_LENGTH = 2000
# forge_releases' update keys and signed URLs (access_keys/signed_urls.CREDENTIAL_PARAMS), and the
# names other tools give tokens in a query: never part of a return address, in any letter case
CREDENTIAL_PARAMS = frozenset(
    {"key", "key_id", "expires", "signature", "token", "access_token", "private_token"}
)


def without_credentials(path: str) -> str:
    """`path` with the credential parameters of its query taken out."""
    parts = urlsplit(path)
    if not parts.query:
        return path
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in pairs if name.lower() not in CREDENTIAL_PARAMS]
    if len(kept) == len(pairs):
        return path
    return urlunsplit(("", "", parts.path, urlencode(kept, quote_via=quote), parts.fragment))


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
    return without_credentials(value)


def sign_in_url(request: web.BaseRequest) -> str:
    """The sign-in page, returning here afterwards (a GET page only: a form post is not
    repeatable)."""
    here = request.rel_url.path_qs if request.method == "GET" else "/"
    target = safe_return_path(here)
    if target == "/":
        return SIGN_IN_PATH
    return f"{SIGN_IN_PATH}?redirect_to={quote(target, safe='/')}"
