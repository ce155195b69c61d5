"""Pieces of the OpenAPI document shared by its read, download and publishing paths: parameters,
response helpers and common responses."""

from __future__ import annotations

from typing import Any

BASE = "/api/v2/repos/{owner}/{repo}/releases"
TIME = {"type": "string", "format": "date-time", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"}
AUTH_NOTE = (
    "Access follows the authentication rules of docs/access.md: public repositories and private "
    "ones with public landing or public releases are readable by anyone; otherwise 401 "
    "AuthTokenMissing for anonymous callers and 404 RepoNotFound for signed-in callers without "
    "access."
)


def error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def json_content(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


def path(name: str, schema: dict[str, Any] | None = None, description: str = "") -> dict[str, Any]:
    """A path parameter (a string unless `schema` says otherwise)."""
    param = {"name": name, "in": "path", "required": True, "schema": schema or {"type": "string"}}
    return {**param, "description": description} if description else param


OWNER = path("owner")
REPO = path("repo")
POSITIVE_ID = {"type": "integer", "minimum": 1}
RELEASE_REF = {"$ref": "#/components/schemas/Release"}
NOT_MODIFIED = {"description": "Not modified (If-None-Match matched the ETag)"}
ACCESS_ERRORS = {
    "401": error("AuthTokenMissing (private repository, nobody signed in) or AuthTokenInvalid"),
    "404": error("RepoNotFound, ReleaseNotFound or NoReleasesFound"),
}
FILE = {
    "description": "The file's bytes",
    "headers": {
        "ETag": {"schema": {"type": "string"}},
        "Last-Modified": {"schema": {"type": "string"}},
        "Content-Length": {"schema": {"type": "integer"}},
    },
    "content": {
        "application/octet-stream": {
            "schema": {"type": "string", "contentMediaType": "application/octet-stream"}
        }
    },
}
DOWNLOAD_RESPONSES = {
    "200": FILE,
    "206": {**FILE, "description": "One byte range (Content-Range)"},
    "304": NOT_MODIFIED,
    "401": ACCESS_ERRORS["401"],
    "404": error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "416": {"description": "Range not satisfiable (Content-Range: bytes */size)"},
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
        "responses": responses,
    }


def query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }
