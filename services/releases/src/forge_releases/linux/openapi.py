"""The OpenAPI operations of the Linux repositories' routes (apt.py, rpm.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forge_common.openapi import error, path_param

from ..openapi.parts import ACCESS_ERRORS, ETAG, NOT_MODIFIED, operation


def metadata_operation(op_id: str, summary: str, params: Sequence[str]) -> dict[str, Any]:
    """A repository metadata file, kept in memory and given with an ETag."""
    return operation(
        op_id,
        summary,
        [path_param(name) for name in params],
        {
            "200": {"description": "The file", "headers": ETAG},
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or NoReleasesFound: no such channel or file"),
        },
        "feeds",
    )


def file_operation(op_id: str, summary: str, params: Sequence[str]) -> dict[str, Any]:
    """A file beside the metadata: a package (as every download), a key, an index by hash."""
    return operation(
        op_id,
        summary,
        [path_param(name) for name in params],
        {
            "200": {"description": "The file", "headers": ETAG},
            "206": {"description": "The ranges asked for (packages)"},
            "302": {"description": "The package in the storage (a presigned URL)"},
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or AssetNotFound"),
        },
        "downloads",
    )
