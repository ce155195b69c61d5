"""The update feeds of the OpenAPI document (feeds/ serves them): the update.electronjs.org URL
shape, Squirrel.Windows RELEASES per architecture and electron-updater's yml files."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, path_param, query_param

from .parts import ACCESS_ERRORS, NOT_MODIFIED, TIME, operation

_ETAG = {"ETag": {"schema": {"type": "string"}}}
_RELEASES_TEXT = {
    "description": "Squirrel.Windows RELEASES: `SHA1 URL size` lines, ` # NN%` when staged",
    "headers": _ETAG,
    "content": {"text/plain": {"schema": {"type": "string"}}},
}
_NO_PACKAGES = error("RepoNotFound, or NoReleasesFound: no full package for this architecture")
_SQUIRREL_MAC = {
    "type": "object",
    "required": ["name", "notes", "pub_date", "url"],
    "properties": {
        "name": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
        "url": {"type": "string", "format": "uri"},
    },
}
_TAURI = {
    "type": "object",
    "required": ["version", "url", "signature", "notes", "pub_date"],
    "properties": {
        "version": {"type": "string"},
        "url": {"type": "string", "format": "uri"},
        "signature": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
    },
    "not": {"required": ["name"]},
}
_TAURI_STATIC = {
    "type": "object",
    "required": ["version", "notes", "pub_date", "platforms"],
    "properties": {
        "version": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
        "platforms": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["signature", "url"],
                "properties": {"signature": {"type": "string"}, "url": {"type": "string"}},
            },
        },
    },
}
_ARCH = path_param("arch", description="x64, arm64, ia32 (also aarch64, x86_64, amd64, x86)")


def feed_paths(base: str) -> dict[str, Any]:
    return {
        f"{base}/feeds/squirrel/{{arch}}/RELEASES": {
            "get": operation(
                "squirrelWindowsFeed",
                "Squirrel.Windows RELEASES of one architecture",
                [
                    _ARCH,
                    query_param("channel", {"type": "string"}, "stable (default), beta, alpha…"),
                ],
                {
                    "200": _RELEASES_TEXT,
                    "304": NOT_MODIFIED,
                    "401": ACCESS_ERRORS["401"],
                    "404": _NO_PACKAGES,
                },
                "feeds",
            )
        },
        f"{base}/feeds/electron/{{file}}": {
            "get": operation(
                "electronUpdaterFile",
                "electron-updater's {channel}.yml, {channel}-mac.yml, {channel}-linux[-arch].yml, "
                "and any file a yml names relative to the feed",
                [
                    path_param(
                        "file",
                        {"type": "string"},
                        "a yml's name, or a file name an uploaded yml hands out (found with "
                        "dashes or dots where the stored name has spaces)",
                    )
                ],
                {
                    "200": {
                        "description": "electron-builder update info (JSON, which is YAML)",
                        "headers": _ETAG,
                        "content": {"text/yaml": {"schema": {"type": "object"}}},
                    },
                    "302": {
                        "description": "The release carries this file (the yml itself, or a "
                        "file it names): its download URL, signed with `?key=`"
                    },
                    "304": NOT_MODIFIED,
                    "401": ACCESS_ERRORS["401"],
                    "404": error("RepoNotFound, or NoReleasesFound: no release has such files"),
                },
                "feeds",
            )
        },
        f"{base}/feeds/tauri/{{target}}/{{arch}}/{{current_version}}": {
            "get": operation(
                "tauriFeed",
                "Tauri v2 dynamic update endpoint",
                [
                    path_param(
                        "target", {"type": "string", "enum": ["darwin", "linux", "windows"]}
                    ),
                    path_param("arch", description="x86_64, aarch64, i686, armv7"),
                    path_param("current_version"),
                    query_param("channel", {"type": "string"}, "stable (default), beta, alpha…"),
                ],
                {
                    "200": json_content("Newer release with a signed bundle", _TAURI),
                    "204": {"description": "No newer release with a signed bundle"},
                    "304": NOT_MODIFIED,
                    "400": error("ValInvalidInput: the version is not SemVer"),
                    **ACCESS_ERRORS,
                },
                "feeds",
            )
        },
        f"{base}/feeds/tauri/latest.json": {
            "get": operation(
                "tauriStaticFeed",
                "Tauri v2 static latest.json",
                [query_param("channel", {"type": "string"}, "stable (default), beta, alpha…")],
                {
                    "200": json_content("The newest release with signed bundles", _TAURI_STATIC),
                    "304": NOT_MODIFIED,
                    "401": ACCESS_ERRORS["401"],
                    "404": error("RepoNotFound, or NoReleasesFound: no signed bundle"),
                },
                "feeds",
            )
        },
        "/{owner}/{repo}/darwin-{arch}/{version}": {
            "get": operation(
                "squirrelMacFeed",
                "Squirrel.Mac update (the update.electronjs.org URL shape)",
                [_ARCH, path_param("version")],
                {
                    "200": json_content("Newer release with a zip for this arch", _SQUIRREL_MAC),
                    "204": {"description": "No newer release"},
                    "304": NOT_MODIFIED,
                    "400": error("ValInvalidInput: the version is not SemVer"),
                    **ACCESS_ERRORS,
                },
                "feeds",
            )
        },
        "/{owner}/{repo}/win32-{arch}/{version}/RELEASES": {
            "get": operation(
                "squirrelWindowsElectronFeed",
                "Squirrel.Windows stable RELEASES (the update.electronjs.org URL shape)",
                [_ARCH, path_param("version")],
                {
                    "200": _RELEASES_TEXT,
                    "304": NOT_MODIFIED,
                    "401": ACCESS_ERRORS["401"],
                    "404": _NO_PACKAGES,
                },
                "feeds",
            )
        },
    }
