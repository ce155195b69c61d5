"""Builds the OpenAPI 3.1 document of the release API (written to openapi.json by `python -m
forge_releases.openapi_doc`; a test checks the committed file is current and true)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .openapi_parts import (
    ACCESS_ERRORS,
    DOWNLOAD_RESPONSES,
    NOT_MODIFIED,
    RELEASE_REF,
    TIME,
    error,
    json_content,
    operation,
    query,
)
from .openapi_write import write_paths


def _merge(paths: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    for path, operations in more.items():
        paths.setdefault(path, {}).update(operations)
    return paths


def build() -> dict[str, Any]:
    base = "/api/v2/repos/{owner}/{repo}/releases"
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "forge release API",
            "version": "2.0.0",
            "description": "Version-2 release API, update check and downloads.",
        },
        "servers": [{"url": "/"}],
        "components": {
            "securitySchemes": {
                "token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`token <t>` or `Bearer <t>`",
                }
            },
            "schemas": {
                "Attachment": {
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
                },
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
                            "items": {"$ref": "#/components/schemas/Attachment"},
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
                        "platform": {"$ref": "#/components/schemas/PlatformInfo"},
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
            },
        },
        "security": [{}, {"token": []}],
        "paths": _merge(
            {
                "/api/v2/openapi.json": {
                    "get": {
                        "operationId": "openapi",
                        "summary": "This document",
                        "tags": ["meta"],
                        "responses": {
                            "200": json_content(
                                "OpenAPI 3.1 document", {"type": "object", "required": ["openapi"]}
                            ),
                            "304": NOT_MODIFIED,
                        },
                    }
                },
                base: {
                    "get": operation(
                        "listReleases",
                        "List releases (newest first)",
                        [
                            query(
                                "page",
                                {"type": "string"},
                                "page number; not a positive integer → 1",
                            ),
                            query("limit", {"type": "string"}, "page size; not in 1-100 → 30"),
                            query(
                                "prereleases",
                                {"type": "string"},
                                "include prereleases (true/false)",
                            ),
                            query(
                                "drafts",
                                {"type": "string"},
                                "include drafts; honoured for repository administrators only",
                            ),
                        ],
                        {
                            "200": json_content(
                                "Releases",
                                {"type": "array", "items": RELEASE_REF},
                                headers={
                                    "X-Total-Count": {"schema": {"type": "integer"}},
                                    "Link": {"schema": {"type": "string"}},
                                },
                            ),
                            "304": NOT_MODIFIED,
                            **ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/update": {
                    "get": operation(
                        "checkUpdate",
                        "Application update check",
                        [
                            query(
                                "version",
                                {"type": "string"},
                                "current version, SemVer, optional `v`",
                            ),
                            query(
                                "platform",
                                {"type": "string"},
                                "darwin, macos, windows, win32, linux",
                            ),
                            query(
                                "arch", {"type": "string"}, "arm64 or any other value (x64 list)"
                            ),
                            query(
                                "channel", {"type": "string"}, "stable (default) or any other value"
                            ),
                        ],
                        {
                            "200": json_content(
                                "A newer release with a matching asset",
                                {"$ref": "#/components/schemas/AppUpdateResponse"},
                            ),
                            "204": {
                                "description": "No newer release or no matching asset (empty body)"
                            },
                            "304": NOT_MODIFIED,
                            "400": error("ValInvalidInput: Invalid version format: <version>"),
                            **ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/latest": {
                    "get": operation(
                        "latestRelease",
                        "Latest release of a channel",
                        [
                            query(
                                "channel",
                                {"type": "string"},
                                "stable (default) excludes prereleases",
                            ),
                        ],
                        {
                            "200": json_content("The release", RELEASE_REF),
                            "304": NOT_MODIFIED,
                            **ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/{{tag}}": {
                    "get": operation(
                        "getRelease",
                        "A release by id or tag",
                        [
                            {
                                "name": "tag",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                                "description": "a positive int64 is a release id, else a tag",
                            },
                        ],
                        {
                            "200": json_content("The release", RELEASE_REF),
                            "304": NOT_MODIFIED,
                            **ACCESS_ERRORS,
                        },
                    )
                },
                "/{owner}/{repo}/releases/download/{tag}/{name}": {
                    "get": operation(
                        "downloadAsset",
                        "Download an asset",
                        [
                            {
                                "name": "tag",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            },
                            {
                                "name": "name",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            },
                        ],
                        DOWNLOAD_RESPONSES,
                        "downloads",
                    )
                },
                "/{owner}/{repo}/releases/latest/download/{name}": {
                    "get": operation(
                        "downloadLatestAsset",
                        "Download an asset of the latest stable release",
                        [
                            {
                                "name": "name",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            },
                        ],
                        DOWNLOAD_RESPONSES,
                        "downloads",
                    )
                },
            },
            write_paths(base),
        ),
    }


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    target = Path(__file__).with_name("openapi.json")
    target.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
