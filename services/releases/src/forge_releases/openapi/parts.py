"""Pieces of the update feeds' operations (each in its feed's record, feeds/): the parameters
and responses every operation of release_api.yaml has too (forge_common.openapi has the
builders)."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, path_param, query_param

TIME = {"type": "string", "format": "date-time", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"}
AUTH_NOTE = (
    "Access follows the authentication rules of docs/access.md: an owner the caller may not see "
    "(a private organization to a non-member, a limited one to an anonymous caller) answers 404 "
    "RepoNotFound; otherwise public repositories and private ones with public landing or public "
    "releases are readable by anyone; otherwise 401 "
    "AuthTokenMissing for anonymous callers and 404 RepoNotFound for signed-in callers without "
    "access."
)


OWNER = path_param("owner")
REPO = path_param("repo")
NOT_MODIFIED = {"description": "Not modified (If-None-Match matched the ETag)"}
# What the middleware answers on any route, before the handler runs (docs/http.md "Errors"): a
# malformed or unknown token (401, public routes included), a token without the route's scope
# (403; routes with a 403 of their own word it for both), and a request body that is cut short
# (400), does not arrive within the body-read deadline (408) or exceeds MAX_BODY_BYTES (413).
REQUEST_ERRORS = {
    "400": error("ValInvalidInput: the request body was cut short"),
    "401": error("AuthTokenInvalid: a malformed Authorization header or an unknown token"),
    "403": error('PermissionDenied: the token lacks the scope (docs/accounts.md "Scopes")'),
    "408": error("RequestTimeout: the request body did not arrive in time"),
    "413": error("PayloadTooLarge: the request body is over the limit"),
    "429": error(
        "TooManyRequests: too many wrong passwords for the account (basic authentication)"
    ),
}
ACCESS_ERRORS = {
    "401": error("AuthTokenMissing (private repository, nobody signed in) or AuthTokenInvalid"),
    "404": error("RepoNotFound, ReleaseNotFound or NoReleasesFound"),
}


def operation(
    op_id: str,
    summary: str,
    params: list[dict[str, Any]],
    responses: dict[str, Any],
    tags: str = "releases",
) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "summary": summary,
        "description": AUTH_NOTE,
        "tags": [tags],
        "parameters": [OWNER, REPO, *params],
        "responses": {**REQUEST_ERRORS, **responses},
    }


# shared by the update feeds' operations (feeds/: each feed's record holds its own)
FEED_ARCH = path_param("arch", description="x64, arm64, ia32 (also aarch64, x86_64, amd64, x86)")
FEED_CHANNEL = query_param("channel", {"type": "string"}, "stable (default), beta, alpha…")
ETAG = {"ETag": {"schema": {"type": "string"}}}
