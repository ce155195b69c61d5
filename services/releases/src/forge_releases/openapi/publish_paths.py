"""The publishing (write) side of the OpenAPI document; publish/handlers.py serves it."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, path_param, query_param, ref

from .parts import POSITIVE_ID, RELEASE_REF, operation

_WRITE_ERRORS = {
    "400": error("ValInvalidInput: malformed JSON or multipart body"),
    "401": error("AuthTokenMissing or AuthTokenInvalid"),
    "403": error("PermissionDenied: no write access, or the repository is archived"),
    "404": error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "409": error("Conflict: the tag or asset name is taken"),
    "413": error("PayloadTooLarge"),
    "422": error("ValidationFailed: a field is missing or invalid (named in the message)"),
}
# The field checks of publish/input.py and publish/names.py (docs/releases.md "Publishing"): no
# NUL in any text; a tag without whitespace or control characters, not `.` or `..`.
_NO_NUL = r"^[^\x00]*$"
_TAG = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": r"^[^\s\x00-\x1f\x7f]+$",
    "not": {"enum": [".", ".."]},
}
# No `/`, `\`, control character or `..`, not blank, not `.` (patterns without lookarounds, which
# generators handle badly: a `.` is always followed by another character or ends the name).
ASSET_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": r"^\.?(?:[^./\\\x00-\x1f\x7f]\.?)+$",
    "not": {"pattern": r"^\s*$"},
}
RELEASE_OPTION = {
    "type": "object",
    "properties": {
        "tag_name": _TAG,
        "target_commitish": {"type": "string", "maxLength": 255, "pattern": _NO_NUL},
        "name": {"type": "string", "maxLength": 255, "pattern": _NO_NUL},
        "body": {"type": "string", "pattern": _NO_NUL},
        "draft": {"type": "boolean"},
        "prerelease": {"type": "boolean"},
        # staged rollout through the update feeds (feeds/); the update check ignores it
        "rollout": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": 100,
            "description": "Percentage of installs the update feeds offer the release to",
        },
    },
}
_RELEASE_ID = path_param("release_id", POSITIVE_ID)


def publish_paths(base: str) -> dict[str, Any]:
    body = {"required": True, "content": {"application/json": {"schema": RELEASE_OPTION}}}
    created = json_content(
        "The release", RELEASE_REF, headers={"Location": {"schema": {"type": "string"}}}
    )
    return {
        base: {
            "post": {
                **operation(
                    "createRelease",
                    "Create a release (write access)",
                    [],
                    {"201": created, **_WRITE_ERRORS},
                ),
                "requestBody": {
                    **body,
                    "content": {
                        "application/json": {"schema": {**RELEASE_OPTION, "required": ["tag_name"]}}
                    },
                },
                "security": [{"token": []}],
            }
        },
        f"{base}/{{release_id}}": {
            "patch": {
                **operation(
                    "editRelease",
                    "Change the given fields of a release",
                    [_RELEASE_ID],
                    {"200": json_content("The release", RELEASE_REF), **_WRITE_ERRORS},
                ),
                "requestBody": body,
                "security": [{"token": []}],
            },
            "delete": {
                **operation(
                    "deleteRelease",
                    "Delete a release and its assets",
                    [_RELEASE_ID],
                    {"204": {"description": "Deleted"}, **_WRITE_ERRORS},
                ),
                "security": [{"token": []}],
            },
        },
        f"{base}/{{release_id}}/assets": {
            "post": {
                **operation(
                    "uploadAsset",
                    "Attach a file (raw body with ?name=, or multipart `attachment`)",
                    [
                        _RELEASE_ID,
                        query_param(
                            "name", ASSET_NAME, "file name (else the multipart part's file name)"
                        ),
                    ],
                    {
                        "201": json_content(
                            "The attachment and the SHA-256 of the stored bytes",
                            ref("UploadedAttachment"),
                        ),
                        **_WRITE_ERRORS,
                        "422": error(
                            "ValidationFailed: a field is missing or invalid (named in the "
                            "message); TauriSignatureInvalid: with a Tauri public key set, a "
                            "`.sig` that does not verify against the file it signs"
                        ),
                        "408": error("RequestTimeout: no upload data received for 120 seconds"),
                        "417": error("HTTPError: an Expect header other than 100-continue"),
                        "503": {
                            **error("ServiceUnavailable: the file could not be stored"),
                            "headers": {"Retry-After": {"schema": {"type": "string"}}},
                        },
                    },
                ),
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/octet-stream": {
                            "schema": {
                                "type": "string",
                                "contentMediaType": "application/octet-stream",
                            }
                        },
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "attachment": {
                                        "type": "string",
                                        "contentMediaType": "application/octet-stream",
                                    }
                                },
                            }
                        },
                    },
                },
                "security": [{"token": []}],
            }
        },
        f"{base}/{{release_id}}/assets/{{asset_id}}": {
            "delete": {
                **operation(
                    "deleteAsset",
                    "Delete an attached file",
                    [
                        _RELEASE_ID,
                        path_param("asset_id", POSITIVE_ID),
                    ],
                    {"204": {"description": "Deleted"}, **_WRITE_ERRORS},
                ),
                "security": [{"token": []}],
            }
        },
    }
