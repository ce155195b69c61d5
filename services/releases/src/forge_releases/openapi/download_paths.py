"""The downloads of the OpenAPI document: an asset by tag, and of the latest stable release."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import path_param

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
}
