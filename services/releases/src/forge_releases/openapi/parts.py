"""Pieces of the OpenAPI document shared by its read, download and publishing paths and by the
compat documents: parameters and common responses (forge_common.openapi has the builders)."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, path_param, query_param, ref

BASE = "/api/v2/repos/{owner}/{repo}/releases"
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
POSITIVE_ID = {"type": "integer", "minimum": 1}
RELEASE_REF = ref("Release")
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
FILE: dict[str, Any] = {
    "description": "The file's bytes",
    "headers": {
        "ETag": {"schema": {"type": "string"}},
        "Last-Modified": {"schema": {"type": "string"}},
        "Content-Length": {"schema": {"type": "integer"}},
    },
    # the asset's own stored content type (declared at upload, else guessed from the name)
    "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
}
DOWNLOAD_RESPONSES = {
    "200": FILE,
    "206": {
        **FILE,
        "description": "One byte range (Content-Range), or several as multipart/byteranges",
    },
    "302": {
        "description": "S3 storage: the file at a presigned URL valid a few minutes",
        "headers": {"Location": {"schema": {"type": "string"}}},
    },
    "304": NOT_MODIFIED,
    "401": ACCESS_ERRORS["401"],
    "404": error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "416": {
        "description": "Range not satisfiable (empty body)",
        "headers": {"Content-Range": {"schema": {"type": "string", "pattern": r"^bytes \*/\d+$"}}},
    },
    "503": error("ServiceUnavailable: the storage cannot be reached (Retry-After)"),
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


def document_path(url: str, op_id: str, request_errors: dict[str, Any]) -> dict[str, Any]:
    """The path of a served OpenAPI document (`request_errors` in the shape's error body)."""
    schema = {"type": "object", "required": ["openapi"]}
    return {
        url: {
            "get": {
                "operationId": op_id,
                "summary": "This document",
                "tags": ["meta"],
                "responses": {
                    "200": json_content("OpenAPI 3.1 document", schema),
                    "304": NOT_MODIFIED,
                    **request_errors,
                },
            }
        }
    }


# shared by the update feeds' operations (feeds/: each feed's record holds its own)
FEED_ARCH = path_param("arch", description="x64, arm64, ia32 (also aarch64, x86_64, amd64, x86)")
FEED_CHANNEL = query_param("channel", {"type": "string"}, "stable (default), beta, alpha…")
ETAG = {"ETag": {"schema": {"type": "string"}}}
