"""The OpenAPI operations of release safety (docs/release-safety.md): forge's own update check,
made from the spec check's operation (the same parameters and answer, plus `allow_downgrade` and
a `mandatory` that is set), and the audit log's reads."""

from __future__ import annotations

import copy
from typing import Any

from forge_common.openapi import error, json_content, query_param

from .parts import OWNER, REPO, REQUEST_ERRORS

SPEC_CHECK = "/api/v2/repos/{owner}/{repo}/releases/update"
SAFE_CHECK = "/api/v2/repos/{owner}/{repo}/update"

_ALLOW_DOWNGRADE = {
    "name": "allow_downgrade",
    "in": "query",
    "required": False,
    "schema": {"type": "string"},
    "description": "true: the app installs a lower version (electron-updater's allowDowngrade, "
    "Velopack's AllowVersionDowngrade); an install on a withdrawn version is then offered the "
    "newest release that is not withdrawn",
}


def safe_check(paths: dict[str, Any]) -> dict[str, Any]:
    operation = copy.deepcopy(paths[SPEC_CHECK]["get"])
    operation["operationId"] = "checkUpdateSafely"
    operation["summary"] = "Update check with release safety (withdrawn, required, critical)"
    operation["description"] = (
        "The spec's update check decided with the rules of release safety (docs/release-safety.md):"
        " an install below a required release is offered it; an install on a withdrawn version is "
        "rolled back with allow_downgrade=true; `mandatory` is true when a critical release is "
        "above the running version. " + operation.get("description", "")
    )
    operation["parameters"] = [*operation["parameters"], _ALLOW_DOWNGRADE]
    operation["responses"]["200"]["description"] = (
        "The release to install (a required step, or a lower one when rolled back)"
    )
    return {SAFE_CHECK: {"get": operation}}


_ENTRY = {
    "type": "object",
    "required": ["id", "created_at", "actor", "kind", "target", "changes", "request_id", "source"],
    "properties": {
        "id": {"type": "integer"},
        "created_at": {"type": "string", "format": "date-time"},
        "actor": {"type": ["string", "null"], "description": "login; null: the system"},
        "kind": {"type": "string", "description": "release.withdrawn, token.created, ..."},
        "target": {"type": "string", "description": "owner/repo@tag, owner/repo, user NAME..."},
        "changes": {
            "type": "object",
            "description": "per field: {before, after}; never a secret value",
            "additionalProperties": {
                "type": "object",
                "properties": {"before": {}, "after": {}},
            },
        },
        "request_id": {"type": ["string", "null"]},
        "source": {
            "type": "string",
            "description": "console, api, cli, system, or plugin:NAME (a plugin's figures)",
            "anyOf": [
                {"enum": ["console", "api", "cli", "system"]},
                {"pattern": "^plugin:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"},
            ],
        },
        "repo_id": {"type": ["integer", "null"]},
    },
}
_FILTERS = [
    query_param("page", {"type": "integer"}, "page number, from 1"),
    query_param("limit", {"type": "integer"}, "entries per page (default 30, at most 100)"),
    query_param("actor", {"type": "string"}, "only this login's changes"),
    query_param("kind", {"type": "string"}, "a kind, or its first part (`release`)"),
    query_param("since", {"type": "string", "format": "date-time"}, "only from then (RFC 3339)"),
]
_LIST = json_content(
    "Entries, newest first (X-Total-Count, Link as the release list)",
    {"type": "array", "items": _ENTRY},
)


def audit_paths() -> dict[str, Any]:
    repo = {
        "operationId": "repoAudit",
        "summary": "The repository's audit log (its admins and site admins)",
        "tags": ["audit"],
        "parameters": [OWNER, REPO, *_FILTERS],
        "responses": {
            **REQUEST_ERRORS,
            "200": _LIST,
            "401": error("AuthTokenMissing: nobody signed in"),
            "404": error("RepoNotFound: also for readers, writers and strangers"),
            "422": error("ValInvalidInput: since is not an RFC 3339 time"),
        },
        "security": [{"token": []}],
    }
    site = {
        "operationId": "adminAudit",
        "summary": "Every audit entry (site admins)",
        "tags": ["audit"],
        "parameters": [
            *_FILTERS,
            query_param("repo", {"type": "string"}, "only this repository's (OWNER/NAME)"),
        ],
        "responses": {
            **REQUEST_ERRORS,
            "200": _LIST,
            "401": error("AuthTokenMissing"),
            "404": error("NotFound: the caller is no site admin"),
            "422": error("ValInvalidInput: since is not an RFC 3339 time"),
        },
        "security": [{"token": []}],
    }
    return {
        "/api/v2/repos/{owner}/{repo}/audit": {"get": repo},
        "/api/v2/admin/audit": {"get": site},
    }
