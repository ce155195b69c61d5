"""The OpenAPI 3.1 document of the release API, built in code next to the handlers it describes:
the read side, the downloads and the publishing side, each in its own module."""

from __future__ import annotations

from typing import Any

from forge_common import openapi

from .download_paths import DOWNLOAD_PATHS
from .feed_paths import feed_paths
from .insights_paths import INSIGHTS_PATHS
from .key_paths import KEY_PATHS
from .parts import BASE, REQUEST_ERRORS, document_path
from .publish_paths import publish_paths
from .read_paths import read_paths
from .schemas import SCHEMAS

_OPENAPI_PATH = document_path("/api/v2/openapi.json", "openapi", REQUEST_ERRORS)


def _merge(paths: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """`more`'s operations added to `paths` (the write side adds methods to read-side paths)."""
    for path, operations in more.items():
        paths.setdefault(path, {}).update(operations)
    return paths


def build() -> dict[str, Any]:
    return openapi.document(
        title="forge release API",
        version="2.0.0",
        description="Version-2 release API, update check and downloads.",
        server="/",
        schemas=SCHEMAS,
        paths=_merge(
            {
                **_OPENAPI_PATH,
                **read_paths(BASE),
                **DOWNLOAD_PATHS,
                **KEY_PATHS,
                **feed_paths(),
                **INSIGHTS_PATHS,
            },
            publish_paths(BASE),
        ),
    )
