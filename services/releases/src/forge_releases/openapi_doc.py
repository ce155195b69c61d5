"""Builds the OpenAPI 3.1 document of the release API (written to openapi.json by `python -m
forge_releases.openapi_doc`; a test checks the committed file is current and true)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_TIME = {"type": "string", "format": "date-time", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"}
_OWNER = {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}}
_REPO = {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}}
_AUTH_NOTE = (
    "Access follows SPEC Authentication: public repositories and private ones with public landing "
    "or public releases are readable by anyone; otherwise 401 AuthTokenMissing for anonymous "
    "callers and 404 RepoNotFound for signed-in callers without access."
)


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _json(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema}},
        **extra,
    }


_RELEASE_REF = {"$ref": "#/components/schemas/Release"}
_NOT_MODIFIED = {"description": "Not modified (If-None-Match matched the ETag)"}
_ACCESS_ERRORS = {
    "401": _error("AuthTokenMissing (private repository, nobody signed in) or AuthTokenInvalid"),
    "404": _error("RepoNotFound, ReleaseNotFound or NoReleasesFound"),
}
_FILE = {
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
_DOWNLOAD_RESPONSES = {
    "200": _FILE,
    "206": {**_FILE, "description": "One byte range (Content-Range)"},
    "304": _NOT_MODIFIED,
    "401": _ACCESS_ERRORS["401"],
    "404": _error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "416": {"description": "Range not satisfiable (Content-Range: bytes */size)"},
}


def _op(
    op_id: str,
    summary: str,
    params: list[dict[str, Any]],
    responses: dict[str, Any],
    tags: str = "releases",
) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "summary": summary,
        "description": _AUTH_NOTE,
        "tags": [tags],
        "parameters": [_OWNER, _REPO, *params],
        "responses": responses,
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


_WRITE_ERRORS = {
    "400": _error("ValInvalidInput: malformed JSON or multipart body"),
    "401": _error("AuthTokenMissing or AuthTokenInvalid"),
    "403": _error("PermissionDenied: no write access, or the repository is archived"),
    "404": _error("RepoNotFound, ReleaseNotFound or AssetNotFound"),
    "409": _error("Conflict: the tag or asset name is taken"),
    "413": _error("PayloadTooLarge"),
    "422": _error("ValidationFailed: a field is missing or invalid (named in the message)"),
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
_RELEASE_ID = {
    "name": "release_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}


def _write_paths(base: str) -> dict[str, Any]:
    """The publishing (write) side; its handlers live in publish_handlers.py."""
    body = {"required": True, "content": {"application/json": {"schema": _RELEASE_OPTION}}}
    created = _json(
        "The release", _RELEASE_REF, headers={"Location": {"schema": {"type": "string"}}}
    )
    return {
        base: {
            "post": {
                **_op(
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
                **_op(
                    "editRelease",
                    "Change the given fields of a release",
                    [_RELEASE_ID],
                    {"200": _json("The release", _RELEASE_REF), **_WRITE_ERRORS},
                ),
                "requestBody": body,
                "security": [{"token": []}],
            },
            "delete": {
                **_op(
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
                **_op(
                    "uploadAsset",
                    "Attach a file (raw body with ?name=, or multipart `attachment`)",
                    [_RELEASE_ID, _query("name", {"type": "string"}, "file name")],
                    {
                        "201": _json("The attachment", {"$ref": "#/components/schemas/Attachment"}),
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
                **_op(
                    "deleteAsset",
                    "Delete an attached file",
                    [
                        _RELEASE_ID,
                        {
                            "name": "asset_id",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "integer", "minimum": 1},
                        },
                    ],
                    {"204": {"description": "Deleted"}, **_WRITE_ERRORS},
                ),
                "security": [{"token": []}],
            }
        },
    }


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
                        "created_at": _TIME,
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
                        "created_at": _TIME,
                        "published_at": _TIME,
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
                        "pub_date": _TIME,
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
                            "200": _json(
                                "OpenAPI 3.1 document", {"type": "object", "required": ["openapi"]}
                            ),
                            "304": _NOT_MODIFIED,
                        },
                    }
                },
                base: {
                    "get": _op(
                        "listReleases",
                        "List releases (newest first)",
                        [
                            _query(
                                "page",
                                {"type": "string"},
                                "page number; not a positive integer → 1",
                            ),
                            _query("limit", {"type": "string"}, "page size; not in 1-100 → 30"),
                            _query(
                                "prereleases",
                                {"type": "string"},
                                "include prereleases (true/false)",
                            ),
                            _query(
                                "drafts",
                                {"type": "string"},
                                "include drafts; honoured for repository administrators only",
                            ),
                        ],
                        {
                            "200": _json(
                                "Releases",
                                {"type": "array", "items": _RELEASE_REF},
                                headers={
                                    "X-Total-Count": {"schema": {"type": "integer"}},
                                    "Link": {"schema": {"type": "string"}},
                                },
                            ),
                            "304": _NOT_MODIFIED,
                            **_ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/update": {
                    "get": _op(
                        "checkUpdate",
                        "Application update check",
                        [
                            _query(
                                "version",
                                {"type": "string"},
                                "current version, SemVer, optional `v`",
                            ),
                            _query(
                                "platform",
                                {"type": "string"},
                                "darwin, macos, windows, win32, linux",
                            ),
                            _query(
                                "arch", {"type": "string"}, "arm64 or any other value (x64 list)"
                            ),
                            _query(
                                "channel", {"type": "string"}, "stable (default) or any other value"
                            ),
                        ],
                        {
                            "200": _json(
                                "A newer release with a matching asset",
                                {"$ref": "#/components/schemas/AppUpdateResponse"},
                            ),
                            "204": {
                                "description": "No newer release or no matching asset (empty body)"
                            },
                            "304": _NOT_MODIFIED,
                            "400": _error("ValInvalidInput: Invalid version format: <version>"),
                            **_ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/latest": {
                    "get": _op(
                        "latestRelease",
                        "Latest release of a channel",
                        [
                            _query(
                                "channel",
                                {"type": "string"},
                                "stable (default) excludes prereleases",
                            ),
                        ],
                        {
                            "200": _json("The release", _RELEASE_REF),
                            "304": _NOT_MODIFIED,
                            **_ACCESS_ERRORS,
                        },
                    )
                },
                f"{base}/{{tag}}": {
                    "get": _op(
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
                            "200": _json("The release", _RELEASE_REF),
                            "304": _NOT_MODIFIED,
                            **_ACCESS_ERRORS,
                        },
                    )
                },
                "/{owner}/{repo}/releases/download/{tag}/{name}": {
                    "get": _op(
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
                        _DOWNLOAD_RESPONSES,
                        "downloads",
                    )
                },
                "/{owner}/{repo}/releases/latest/download/{name}": {
                    "get": _op(
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
                        _DOWNLOAD_RESPONSES,
                        "downloads",
                    )
                },
            },
            _write_paths(base),
        ),
    }


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    target = Path(__file__).with_name("openapi.json")
    target.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
