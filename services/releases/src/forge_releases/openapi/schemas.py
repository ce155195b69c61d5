"""The schemas of the release API's OpenAPI document: the JSON objects it sends (wire names:
docs/http.md; release and attachment fields: docs/releases.md)."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import ref

from .parts import TIME

ATTACHMENT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "id",
        "name",
        "size",
        "download_count",
        "created_at",
        "uuid",
        "browser_download_url",
    ],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "size": {"type": "integer", "minimum": 0},
        "download_count": {"type": "integer", "minimum": 0},
        "created_at": TIME,
        "uuid": {"type": "string", "format": "uuid"},
        "browser_download_url": {"type": "string", "format": "uri"},
    },
}
# An upload's answer: the attachment and `sha256`, the hex SHA-256 of the stored bytes
# (docs/releases.md "Attachment").
UPLOADED_ATTACHMENT: dict[str, Any] = {
    **ATTACHMENT,
    "required": [*ATTACHMENT["required"], "sha256"],
    "properties": {
        **ATTACHMENT["properties"],
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
}

SCHEMAS: dict[str, Any] = {
    "Attachment": ATTACHMENT,
    "UploadedAttachment": UPLOADED_ATTACHMENT,
    "Release": {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "id",
            "tag_name",
            "target_commitish",
            "name",
            "body",
            "url",
            "html_url",
            "tarball_url",
            "zipball_url",
            "draft",
            "prerelease",
            "created_at",
            "published_at",
            "assets",
        ],
        "properties": {
            "id": {"type": "integer"},
            "tag_name": {"type": "string"},
            "target_commitish": {"type": "string"},
            "name": {"type": "string"},
            "body": {"type": "string", "description": "release notes, markdown"},
            "url": {"type": "string", "format": "uri"},
            "html_url": {"type": "string", "format": "uri"},
            "tarball_url": {"type": "string", "format": "uri"},
            "zipball_url": {"type": "string", "format": "uri"},
            "draft": {"type": "boolean"},
            "prerelease": {"type": "boolean"},
            "created_at": TIME,
            "published_at": TIME,
            "assets": {
                "type": "array",
                "items": ref("Attachment"),
            },
        },
    },
    "PlatformInfo": {
        "type": "object",
        "additionalProperties": False,
        "description": "All members are omitted when empty.",
        "properties": {
            "releases_url": {"type": "string", "format": "uri"},
            "nupkg_url": {"type": "string", "format": "uri"},
            "signature": {"type": "string"},
            "size": {"type": "integer", "format": "int64", "minimum": 1},
        },
    },
    "AppUpdateResponse": {
        "type": "object",
        "additionalProperties": False,
        "required": ["url", "name", "notes", "pub_date", "platform"],
        "properties": {
            "url": {"type": "string", "format": "uri"},
            "name": {"type": "string", "description": "tag of the newer release"},
            "notes": {"type": "string"},
            "pub_date": TIME,
            "mandatory": {
                "type": "boolean",
                "const": True,
                "description": "omitted when false",
            },
            "platform": ref("PlatformInfo"),
        },
    },
    "Error": {
        "type": "object",
        "additionalProperties": False,
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "additionalProperties": False,
                "required": ["code", "message", "status", "request_id"],
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "status": {"type": "integer"},
                    "request_id": {"type": "string"},
                },
            }
        },
    },
}
