"""The OpenAPI description of the Gitea-shaped account administration this service serves
(handlers/accounts.py, handlers/org_admin.py; docs/accounts.md), merged into openapi.py's document.
Shapes are Gitea's (modules/structs) under Gitea's names, prefixed where this document already
has a smaller schema of the same name."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import JSON, object_schema, ref

_INT64 = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_TIME = {"type": "string", "format": "date-time"}
_TIME_OR_ZERO = {"type": "string", "description": "RFC 3339; 0001-01-01T00:00:00Z for never"}
_NULL_STR = {"type": ["string", "null"]}
_NULL_BOOL = {"type": ["boolean", "null"]}
_VISIBILITY = {"enum": ["public", "limited", "private"]}
_PERMISSION = {"enum": ["read", "write", "admin"]}


def _open(props: dict[str, Any], required: tuple[str, ...] = ()) -> JSON:
    """A request body: these fields (others are accepted and ignored, as Gitea does)."""
    return {"type": "object", "properties": props, "required": list(required)}


SCHEMAS: JSON = {
    "GiteaUser": object_schema(
        {
            "id": _INT64,
            "login": _STR,
            "login_name": _STR,
            "source_id": _INT64,
            "full_name": _STR,
            "email": {**_STR, "description": "empty unless the caller is the user or a site admin"},
            "avatar_url": _STR,
            "html_url": _STR,
            "language": _STR,
            "is_admin": {
                **_BOOL,
                "description": "false unless the caller is the user or a site admin",
            },
            "last_login": _TIME_OR_ZERO,
            "created": _TIME,
            "restricted": _BOOL,
            "active": _BOOL,
            "prohibit_login": _BOOL,
            "location": _STR,
            "website": _STR,
            "description": _STR,
            "visibility": _VISIBILITY,
            "followers_count": _INT64,
            "following_count": _INT64,
            "starred_repos_count": _INT64,
            "username": _STR,
        }
    ),
    "GiteaOrganization": object_schema(
        {
            "id": _INT64,
            "name": _STR,
            "full_name": _STR,
            "email": _STR,
            "avatar_url": _STR,
            "description": _STR,
            "website": _STR,
            "location": _STR,
            "visibility": _VISIBILITY,
            "repo_admin_change_team_access": _BOOL,
            "username": _STR,
        }
    ),
    "GiteaRepository": {
        "type": "object",
        "description": "Gitea's Repository; forge adds public_landing and public_releases.",
        "required": [
            "id",
            "owner",
            "name",
            "full_name",
            "description",
            "private",
            "archived",
            "html_url",
            "url",
            "permissions",
            "public_landing",
            "public_releases",
        ],
        "properties": {
            "id": _INT64,
            "owner": ref("GiteaUser"),
            "name": _STR,
            "full_name": _STR,
            "description": _STR,
            "private": _BOOL,
            "archived": _BOOL,
            "html_url": _STR,
            "url": _STR,
            "permissions": ref("Permission"),
            "public_landing": _BOOL,
            "public_releases": _BOOL,
        },
    },
    "Team": object_schema(
        {
            "id": _INT64,
            "name": _STR,
            "description": _STR,
            "organization": ref("GiteaOrganization"),
            "includes_all_repositories": _BOOL,
            "permission": _PERMISSION,
            "units": {"type": "array", "items": _STR},
            "units_map": {"type": "object", "additionalProperties": _PERMISSION},
            "can_create_org_repo": _BOOL,
        }
    ),
    "AccessToken": object_schema(
        {
            "id": _INT64,
            "name": _STR,
            "sha1": {**_STR, "description": "the token: only in the answer that created it"},
            "token_last_eight": _STR,
            "scopes": {"type": "array", "items": _STR},
            "created_at": _TIME,
            "last_used_at": _TIME_OR_ZERO,
        }
    ),
    "CreateUserOption": _open(
        {
            "username": _STR,
            "email": _STR,
            "password": _STR,
            "full_name": _NULL_STR,
            "must_change_password": {**_NULL_BOOL, "description": "default true, as Gitea"},
        },
        ("username", "email", "password"),
    ),
    "EditUserOption": _open(
        {
            "email": _NULL_STR,
            "full_name": _NULL_STR,
            "website": _NULL_STR,
            "location": _NULL_STR,
            "description": _NULL_STR,
            "password": {**_NULL_STR, "description": "empty: unchanged"},
            "must_change_password": _NULL_BOOL,
            "admin": _NULL_BOOL,
        },
    ),
    "CreateOrgOption": _open(
        {
            "username": _STR,
            "full_name": _NULL_STR,
            "email": _NULL_STR,
            "description": _NULL_STR,
            "website": _NULL_STR,
            "location": _NULL_STR,
            "visibility": {"enum": ["public", "limited", "private", None]},
        },
        ("username",),
    ),
    "CreateRepoOption": _open(
        {
            "name": _STR,
            "description": _NULL_STR,
            "private": _NULL_BOOL,
            "public_landing": _NULL_BOOL,
            "public_releases": _NULL_BOOL,
        },
        ("name",),
    ),
    "CreateTeamOption": _open(
        {
            "name": _STR,
            "description": _NULL_STR,
            "permission": {"enum": ["read", "write", "admin", None]},
            "units_map": {"type": ["object", "null"]},
            "includes_all_repositories": {
                **_NULL_BOOL,
                "description": "every repository of the organization, those made later too",
            },
        },
        ("name",),
    ),
    "CreateAccessTokenOption": _open(
        {"name": _STR, "scopes": {"type": "array", "items": _STR}}, ("name", "scopes")
    ),
}


def paths(op: Any, params: Any) -> JSON:
    """The paths, built with openapi.py's `_op` and `_params` so errors read alike."""
    private = {"Cache-Control": {"schema": _STR}}
    write = "400 401 403 404 413 422"
    return {
        "/version": {
            "get": op(
                "The Gitea API version whose shapes forge follows",
                "200",
                object_schema({"version": _STR}),
                "",
                headers={"Cache-Control": {"schema": _STR}},
            ),
        },
        "/admin/users": {
            "post": op(
                "Create a user (site admins)",
                "201",
                ref("GiteaUser"),
                "400 401 403 413 422",
                body="CreateUserOption",
            ),
        },
        "/admin/users/{username}": {
            "parameters": params("username"),
            "patch": op(
                "Edit a user (site admins)",
                "200",
                ref("GiteaUser"),
                "400 401 403 404 413 422",
                body="EditUserOption",
            ),
            "delete": {
                **op("Delete a user (site admins)", "204", None, "401 403 404 422"),
                "parameters": [
                    {
                        "name": "purge",
                        "in": "query",
                        "schema": _STR,
                        "description": "true: delete the user's repositories with them",
                    },
                ],
            },
        },
        "/user": {
            "get": op("The signed-in user", "200", ref("GiteaUser"), "401", headers=private),
        },
        "/user/repos": {
            "post": op(
                "Create a repository of the signed-in user",
                "201",
                ref("GiteaRepository"),
                "400 401 403 404 409 413 422",
                body="CreateRepoOption",
            ),
        },
        "/users/{username}": {
            "parameters": params("username"),
            "get": op("A user (users are public)", "200", ref("GiteaUser"), "404", headers=private),
        },
        "/users/{username}/tokens": {
            "parameters": params("username"),
            "get": op(
                "List a user's access tokens (basic authentication with the password)",
                "200",
                {"type": "array", "items": ref("AccessToken")},
                "401 403 404",
            ),
            "post": op(
                "Create an access token (basic authentication with the password)",
                "201",
                ref("AccessToken"),
                write,
                body="CreateAccessTokenOption",
            ),
        },
        "/users/{username}/tokens/{token}": {
            "parameters": params("username", "token"),
            "delete": op("Delete an access token by id or name", "204", None, "401 403 404"),
        },
        "/orgs": {
            "post": op(
                "Create an organization (the caller is its owner)",
                "201",
                ref("GiteaOrganization"),
                "400 401 403 413 422",
                body="CreateOrgOption",
            ),
        },
        "/orgs/{org}": {
            "parameters": params("org"),
            "get": op(
                "An organization (404 when the caller may not see it)",
                "200",
                ref("GiteaOrganization"),
                "404",
                headers=private,
            ),
        },
        "/orgs/{org}/repos": {
            "parameters": params("org"),
            "post": op(
                "Create a repository of an organization (owners, site admins)",
                "201",
                ref("GiteaRepository"),
                "400 401 403 404 409 413 422",
                body="CreateRepoOption",
            ),
        },
        "/orgs/{org}/teams": {
            "parameters": params("org"),
            "get": op(
                "List the teams (members, site admins)",
                "200",
                {"type": "array", "items": ref("Team")},
                "401 403 404",
                headers=private,
            ),
            "post": op(
                "Create a team (owners, site admins)",
                "201",
                ref("Team"),
                write,
                body="CreateTeamOption",
            ),
        },
        "/orgs/{org}/members/{username}": {
            "parameters": params("org", "username"),
            "delete": op(
                "Remove a member from the organization and its teams",
                "204",
                None,
                "401 403 404 422",
            ),
        },
        "/teams/{id}": {
            "parameters": params("id"),
            "get": op(
                "A team (members, site admins)", "200", ref("Team"), "401 403 404", headers=private
            ),
        },
        "/teams/{id}/members/{username}": {
            "parameters": params("id", "username"),
            "put": op("Add a team member (joins the organization)", "204", None, "401 403 404"),
            "delete": op("Remove a team member", "204", None, "401 403 404"),
        },
        "/teams/{id}/repos/{org}/{repo}": {
            "parameters": params("id", "org", "repo"),
            "put": op("Give the team a repository of its organization", "204", None, "401 403 404"),
            "delete": op("Take a repository from the team", "204", None, "401 403 404"),
        },
    }
