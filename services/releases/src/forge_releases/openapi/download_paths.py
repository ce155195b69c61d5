"""The downloads of the OpenAPI document: an asset by tag, and of the latest stable release."""

from __future__ import annotations

from typing import Any

from .parts import DOWNLOAD_RESPONSES, operation

DOWNLOAD_PATHS: dict[str, Any] = {
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
}
