"""The OpenAPI 3.1 document of this service, served at /api/v1/openapi.json.

Built here, next to the code it describes; a test checks that it lists exactly the routes the
application serves and that every response the tests receive matches its schema.
"""

from __future__ import annotations

from aiohttp import web
from forge_common import openapi
from forge_common.auth import viewer_of
from forge_common.openapi import JSON, error_responses, object_schema, ref

from . import openapi_accounts
from .caching import cached_json
from .payloads import MAX_GROUP_NAME

_INT32 = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_INT64 = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_TIME = {"type": "string", "format": "date-time"}
# Request fields: an optional field may be null (the same as absent).
_NULL_INT32 = {**_INT32, "type": ["integer", "null"]}
_NULL_INT64 = {**_INT64, "type": ["integer", "null"]}
_NULL_BOOL = {"type": ["boolean", "null"]}
# A group name as payloads.py takes it: 1-100 characters after trimming, no NUL.
_GROUP_NAME = {
    "type": "string",
    "pattern": r"^\s*[^\s\x00](?:[^\x00]{0," + str(MAX_GROUP_NAME - 2) + r"}[^\s\x00])?\s*$",
}


SCHEMAS: JSON = {
    "User": object_schema(
        {"id": _INT64, "login": _STR, "full_name": _STR, "avatar_url": _STR, "html_url": _STR}
    ),
    "Organization": object_schema(
        {
            "id": _INT64,
            "name": _STR,
            "full_name": _STR,
            "description": _STR,
            "website": _STR,
            "location": _STR,
            "avatar_url": _STR,
            "visibility": {"enum": ["public", "limited", "private"]},
        }
    ),
    "Permission": object_schema({"admin": _BOOL, "push": _BOOL, "pull": _BOOL}),
    "Repository": object_schema(
        {
            "id": _INT64,
            "owner": ref("User"),
            "name": _STR,
            "full_name": _STR,
            "description": _STR,
            "private": _BOOL,
            "archived": _BOOL,
            "html_url": _STR,
            "created_at": _TIME,
            "updated_at": _TIME,
            "permissions": {
                **ref("Permission"),
                "description": "Always as if the viewer had read permission: "
                "admin false, push false, pull true.",
            },
        }
    ),
    "OrgPinnedGroup": object_schema(
        {"id": _INT64, "name": _STR, "display_order": _INT32, "collapsed": _BOOL}
    ),
    "OrgPinnedRepo": object_schema(
        {
            "id": _INT64,
            "repo_id": _INT64,
            "group_id": {**_INT64, "description": "0 means no group"},
            "display_order": _INT32,
            "repo": ref("Repository"),
            "group": {**ref("OrgPinnedGroup"), "description": "present only in a group"},
        },
        optional=("group",),
    ),
    "OrgPublicMember": object_schema({"user": ref("User"), "role": {"enum": ["owner", "member"]}}),
    "OrgStats": object_schema(
        {
            "member_count": {
                **_INT64,
                "description": "all members for members, else public members",
            },
            "repo_count": {**_INT64, "description": "repositories the viewer can read"},
            "public_repo_count": _INT64,
            "team_count": {**_INT64, "description": "0 for non-members"},
        }
    ),
    "OrgOverview": object_schema(
        {
            "organization": ref("Organization"),
            "pinned_repos": {"type": "array", "items": ref("OrgPinnedRepo")},
            "pinned_groups": {"type": "array", "items": ref("OrgPinnedGroup")},
            "public_members": {
                "type": "array",
                "items": ref("OrgPublicMember"),
                "maxItems": 12,
            },
            "total_members": {**_INT64, "description": "number of public members"},
            "stats": ref("OrgStats"),
        }
    ),
    "Error": object_schema(
        {"message": _STR, "errors": {"type": "array", "items": _STR}}, optional=("errors",)
    ),
    "AddOrgPinnedRepoOption": {
        "type": "object",
        "properties": {
            "repo_name": {**_STR, "pattern": r"\S", "description": "trimmed"},
            "group_id": {**_NULL_INT64, "description": "0, null or absent: no group"},
            "display_order": _NULL_INT32,
        },
        "required": ["repo_name"],
    },
    "ReorderOrgPinnedReposOption": {
        "type": "object",
        "properties": {
            "orders": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "repo_id": {**_INT64, "minimum": 1},
                        "group_id": _NULL_INT64,
                        "display_order": _NULL_INT32,
                    },
                    "required": ["repo_id"],
                },
            }
        },
        "required": ["orders"],
    },
    "CreateOrgPinnedGroupOption": {
        "type": "object",
        "properties": {
            "name": _GROUP_NAME,
            "display_order": _NULL_INT32,
            "collapsed": _NULL_BOOL,
        },
        "required": ["name"],
    },
    "UpdateOrgPinnedGroupOption": {
        "type": "object",
        "description": "Only the supplied fields change.",
        "properties": {
            "name": {**_GROUP_NAME, "type": ["string", "null"]},
            "display_order": _NULL_INT32,
            "collapsed": _NULL_BOOL,
        },
    },
}

_ERRORS = {
    "304": "Not modified (If-None-Match matched the ETag)",
    "400": "Malformed JSON body, or a request body cut short",
    "401": "Not signed in, or a malformed or unknown token",
    "403": "Not allowed, or the token lacks the route's scope",
    "404": "Not found, or not visible to the caller",
    "408": "The request body did not arrive in time",
    "409": "A repository of that name already exists",
    "413": "Request body too large",
    "422": "Validation failed; `errors` names the field",
    "429": "Too many failed passwords for this account (basic authentication); see Retry-After",
}
# What the middleware answers on any route before the handler runs: a malformed or unknown token
# (401), a token without the route's scope (403, docs/accounts.md "Scopes"), too many wrong
# passwords (429), and a request body that is cut short (400), late (408) or over the limit (413).
_REQUEST = "400 401 403 408 413 429"
_CACHE_HEADERS = {
    "ETag": {"schema": _STR, "description": "per viewer"},
    "Cache-Control": {"schema": {"const": "private"}},
    "Vary": {"schema": {"const": "Authorization"}},
}


def _op(
    summary: str,
    success: str,
    schema: JSON | None,
    errors: str,
    *,
    body: str | None = None,
    headers: JSON | None = None,
) -> JSON:
    ok: JSON = {"description": summary}
    if schema is not None:
        ok["content"] = {"application/json": {"schema": schema}}
    if headers:
        ok["headers"] = headers
    op: JSON = {
        "summary": summary,
        "responses": {
            success: ok,
            **error_responses([*errors.split(), *_REQUEST.split()], _ERRORS, _CACHE_HEADERS),
        },
    }
    if body is not None:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": ref(body)}},
        }
    return op


def _params(*names: str) -> list[JSON]:
    kinds = {"id": {"type": "integer", "format": "int64"}}
    return [
        {"name": n, "in": "path", "required": True, "schema": kinds.get(n, _STR)} for n in names
    ]


_READ = "304 401 404"
_WRITE = "400 401 403 404 413 422"
_LIST_PINS = {"type": "array", "items": ref("OrgPinnedRepo")}
_LIST_GROUPS = {"type": "array", "items": ref("OrgPinnedGroup")}
_LIST_MEMBERS = {"type": "array", "items": ref("OrgPublicMember")}

PATHS: JSON = {
    "/openapi.json": {
        "get": _op(
            "This document",
            "200",
            {"type": "object", "required": ["openapi", "paths"]},
            "304",
            headers=_CACHE_HEADERS,
        ),
    },
    "/orgs/{org}/pinned": {
        "parameters": _params("org"),
        "get": _op("List pinned repositories", "200", _LIST_PINS, _READ, headers=_CACHE_HEADERS),
        "post": _op(
            "Pin a repository", "201", ref("OrgPinnedRepo"), _WRITE, body="AddOrgPinnedRepoOption"
        ),
    },
    "/orgs/{org}/pinned/{repo}": {
        "parameters": _params("org", "repo"),
        "delete": _op("Unpin a repository", "204", None, "401 403 404"),
    },
    "/orgs/{org}/pinned/reorder": {
        "parameters": _params("org"),
        "put": _op(
            "Reorder pinned repositories", "204", None, _WRITE, body="ReorderOrgPinnedReposOption"
        ),
    },
    "/orgs/{org}/pinned/groups": {
        "parameters": _params("org"),
        "get": _op("List pinned groups", "200", _LIST_GROUPS, _READ, headers=_CACHE_HEADERS),
        "post": _op(
            "Create a pinned group",
            "201",
            ref("OrgPinnedGroup"),
            _WRITE,
            body="CreateOrgPinnedGroupOption",
        ),
    },
    "/orgs/{org}/pinned/groups/{id}": {
        "parameters": _params("org", "id"),
        "put": _op(
            "Update a pinned group",
            "200",
            ref("OrgPinnedGroup"),
            _WRITE,
            body="UpdateOrgPinnedGroupOption",
        ),
        "delete": _op("Delete a pinned group", "204", None, "401 403 404"),
    },
    "/orgs/{org}/overview": {
        "parameters": _params("org"),
        "get": _op(
            "Organization overview", "200", ref("OrgOverview"), _READ, headers=_CACHE_HEADERS
        ),
    },
    "/orgs/{org}/public_members/roles": {
        "parameters": [
            *_params("org"),
            # accepted and ignored, whatever their value: every public member is returned
            {"name": "page", "in": "query", "schema": _STR, "description": "ignored"},
            {"name": "limit", "in": "query", "schema": _STR, "description": "ignored"},
        ],
        "get": _op(
            "Every public member with role (page and limit are ignored)",
            "200",
            _LIST_MEMBERS,
            _READ,
            headers={**_CACHE_HEADERS, "X-Total-Count": {"schema": {"type": "integer"}}},
        ),
    },
    "/orgs/{org}/public_members/{username}": {
        "parameters": _params("org", "username"),
        "put": _op("Make a membership public", "204", None, "401 403 404"),
        "delete": _op("Conceal a membership", "204", None, "401 403 404"),
    },
}


def document() -> JSON:
    return openapi.document(
        title="Organization profile API",
        version="1",
        server="/api/v1",
        schemas={**SCHEMAS, **openapi_accounts.SCHEMAS},
        paths={**PATHS, **openapi_accounts.paths(_op, _params)},
    )


async def serve(request: web.Request) -> web.Response:
    return cached_json(request, viewer_of(request), document())
