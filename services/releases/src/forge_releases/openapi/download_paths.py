"""The downloads of the OpenAPI document: an asset by tag, of the latest stable release, and the
source archive addresses (downloads/archives.py)."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, path_param

from .key_paths import SIGNED_URL_PARAMS
from .parts import DOWNLOAD_RESPONSES, operation

DOWNLOAD_PATHS: dict[str, Any] = {
    "/{owner}/{repo}/releases/download/{tag}/{name}": {
        "get": operation(
            "downloadAsset",
            "Download an asset",
            [
                path_param("tag"),
                path_param("name"),
                *SIGNED_URL_PARAMS,
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
                path_param("name"),
                *SIGNED_URL_PARAMS,
            ],
            DOWNLOAD_RESPONSES,
            "downloads",
        )
    },
    "/{owner}/{repo}/archive/{file}": {
        "get": operation(
            "sourceArchive",
            "A release's tarball_url / zipball_url: its own source archive, if it carries one",
            [path_param("file", {"type": "string"}, "`{tag}.tar.gz` or `{tag}.zip`")],
            {
                "302": {
                    "description": "The release's source archive (a file it carries)",
                    "headers": {"Location": {"schema": {"type": "string"}}},
                },
                "401": DOWNLOAD_RESPONSES["401"],
                "404": error(
                    "NoSourceArchive: forge hosts no git, and the release carries no source "
                    "archive of that kind; or RepoNotFound, ReleaseNotFound"
                ),
            },
            "downloads",
        )
    },
}
