"""Keys in the OpenAPI document: the update keys' admin routes (access_keys/handlers.py) and the
`key` query parameter of the reads an updater makes (docs/access.md "Update keys"); the
repository's Tauri public key (signing_keys/, docs/releases.md "Tauri public key")."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, path_param, query_param

from ..signing_keys.kinds import TAURI
from .parts import POSITIVE_ID, TIME, operation

KEYS = "/api/v2/repos/{owner}/{repo}/update_keys"
KEY_PARAM = query_param(
    "key",
    {"type": "string", "maxLength": 200},
    "an update key of this repository (read only; no Authorization header): every download URL "
    "in the answer is then signed and short-lived. A bad, revoked or foreign key: 404 RepoNotFound",
)
# A download takes the key itself, or the three parameters of a signed URL handed out under one
SIGNED_URL_PARAMS = [
    KEY_PARAM,
    query_param(
        "key_id", {"type": "string"}, "signed URL: the id of the update key it was signed under"
    ),
    query_param(
        "expires", {"type": "string"}, "signed URL: Unix seconds after which it is refused"
    ),
    query_param(
        "signature",
        {"type": "string"},
        "signed URL: HMAC of key_id, expires and the path; a bad, expired or revoked one: 404",
    ),
]
_NAME = {"type": "string", "minLength": 1, "maxLength": 100}
_REQUIRED = ["id", "name", "created_at", "creator"]
_PROPERTIES: dict[str, Any] = {
    "id": POSITIVE_ID,
    "name": _NAME,
    "created_at": TIME,
    "creator": {"type": ["string", "null"]},
}
_KEY = {"type": "object", "required": _REQUIRED, "properties": _PROPERTIES}
_CREATED = {
    "type": "object",
    "required": [*_REQUIRED, "key"],
    "properties": {
        **_PROPERTIES,
        "key": {"type": "string", "pattern": "^forge_uk_", "description": "shown only once"},
    },
}
_ADMIN_ERRORS = {
    "401": error("AuthTokenMissing or AuthTokenInvalid"),
    "403": error("PermissionDenied: not an administrator of the repository"),
    "404": error("RepoNotFound"),
}
_NO_STORE = {"Cache-Control": {"schema": {"type": "string", "const": "no-store"}}}


def _json_body(field: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A required JSON object body with one required field."""
    body = {"type": "object", "required": [field], "properties": {field: schema}}
    return {"required": True, "content": {"application/json": {"schema": body}}}


KEY_PATHS: dict[str, Any] = {
    KEYS: {
        "get": {
            **operation(
                "listUpdateKeys",
                "The repository's update keys, never their secrets (admin access)",
                [],
                {
                    "200": json_content(
                        "The keys, oldest first",
                        {"type": "array", "items": _KEY},
                        headers=_NO_STORE,
                    ),
                    **_ADMIN_ERRORS,
                },
                "update keys",
            ),
            "security": [{"token": []}],
        },
        "post": {
            **operation(
                "createUpdateKey",
                "Create an update key (admin access); the key is in this answer only",
                [],
                {
                    "201": json_content("The key, with its secret", _CREATED, headers=_NO_STORE),
                    "400": error("ValInvalidInput: malformed JSON"),
                    "422": error("ValidationFailed: name missing, empty or over 100 characters"),
                    **_ADMIN_ERRORS,
                },
                "update keys",
            ),
            "requestBody": _json_body("name", _NAME),
            "security": [{"token": []}],
        },
    },
    f"{KEYS}/{{key_id}}": {
        "delete": {
            **operation(
                "revokeUpdateKey",
                "Revoke an update key: the key and every URL signed under it stop working",
                [path_param("key_id", POSITIVE_ID)],
                {
                    "204": {"description": "Revoked (empty body)"},
                    **_ADMIN_ERRORS,
                    "404": error("RepoNotFound or UpdateKeyNotFound"),
                },
                "update keys",
            ),
            "security": [{"token": []}],
        },
    },
}

_TAURI_KEY = {
    "type": "object",
    "required": ["public_key", "key_id", "updated_at", "updated_by"],
    "properties": {
        "public_key": {
            "type": "string",
            "description": "base64 of the minisign .pub file, as tauri.conf.json's pubkey holds it",
        },
        "key_id": {"type": "string", "pattern": "^[0-9A-F]{16}$"},
        "updated_at": TIME,
        "updated_by": {"type": ["string", "null"]},
    },
}
_TAURI_KEY_ANSWER = json_content("The repository's Tauri public key", _TAURI_KEY, headers=_NO_STORE)
_NO_TAURI_KEY = error("RepoNotFound, or TauriKeyNotFound: none is set")

KEY_PATHS[TAURI.path] = {
    "get": operation(
        "getTauriKey",
        "The repository's Tauri public key (anyone who can read the repository)",
        [],
        {"200": _TAURI_KEY_ANSWER, "404": _NO_TAURI_KEY},
        "update keys",
    ),
    "put": {
        **operation(
            "setTauriKey",
            "Set or replace the Tauri public key (admin access); from then on an uploaded "
            "`.sig` that does not verify against its file is refused with 422",
            [],
            {
                "200": _TAURI_KEY_ANSWER,
                "400": error("ValInvalidInput: malformed JSON"),
                "422": error("ValidationFailed: public_key missing or not a minisign public key"),
                **_ADMIN_ERRORS,
            },
            "update keys",
        ),
        "requestBody": _json_body(
            "public_key",
            {
                "type": "string",
                "minLength": 1,
                "description": "what `tauri signer generate` wrote to the .pub file (its base64 "
                "form), the decoded file, or its key line",
            },
        ),
        "security": [{"token": []}],
    },
    "delete": {
        **operation(
            "deleteTauriKey",
            "Remove the Tauri public key (admin access): uploads are no longer checked",
            [],
            {"204": {"description": "Removed (empty body)"}, **_ADMIN_ERRORS, "404": _NO_TAURI_KEY},
            "update keys",
        ),
        "security": [{"token": []}],
    },
}
