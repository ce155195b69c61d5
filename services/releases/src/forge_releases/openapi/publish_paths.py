"""The publishing (write) side of the OpenAPI document; publish/handlers.py serves it."""

from __future__ import annotations

from typing import Any

from .parts import POSITIVE_ID, RELEASE_REF, error, json_content, operation, path, query

_WRITE_ERRORS = {
    "400": error("ValInvalidInput: malformed JSON or multipart body"),
    "401": error("AuthTokenMissing or AuthTokenInvalid"),
    "403": error("PermissionDenied: no write access, or the repository is archived"),
    "404": error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "409": error("Conflict: the tag or asset name is taken"),
    "413": error("PayloadTooLarge"),
    "422": error("ValidationFailed: a field is missing or invalid (named in the message)"),
}
_RELEASE_OPTION = {
    "type": "object",
    "properties": {
        "tag_name": {"type": "string"},
        "target_commitish": {"type": "string"},
        "name": {"type": "string"},
        "body": {"type": "string"},
        "draft": {"type": "boolean"},
        "prerelease": {"type": "boolean"},
    },
}
_ATTACHMENT_REF = {"$ref": "#/components/schemas/Attachment"}
_RELEASE_ID = path("release_id", POSITIVE_ID)


def publish_paths(base: str) -> dict[str, Any]:
    body = {"required": True, "content": {"application/json": {"schema": _RELEASE_OPTION}}}
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
                        "application/json": {
                            "schema": {**_RELEASE_OPTION, "required": ["tag_name"]}
                        }
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
                    [_RELEASE_ID, query("name", {"type": "string"}, "file name")],
                    {
                        "201": json_content(
                            "The attachment", {"$ref": "#/components/schemas/Attachment"}
                        ),
                        **_WRITE_ERRORS,
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
                        path("asset_id", POSITIVE_ID),
                    ],
                    {"204": {"description": "Deleted"}, **_WRITE_ERRORS},
                ),
                "security": [{"token": []}],
            }
        },
    }
