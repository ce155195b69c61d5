"""The read side of the OpenAPI document: list, update check, latest and get (read/ serves them)."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, path_param, query_param, ref

from .key_paths import KEY_PARAM
from .parts import ACCESS_ERRORS, NOT_MODIFIED, RELEASE_REF, operation

# Update check rule 1: one leading `v`, then a strict SemVer 2.0 version (the `semver` package's
# rule); anything else, the empty string included, is 400.
_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_VERSION = (
    r"^v?(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)"
    rf"(?:-{_ID}(?:\.{_ID})*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def read_paths(base: str) -> dict[str, Any]:
    return {
        base: {
            "get": operation(
                "listReleases",
                "List releases (newest first)",
                [
                    query_param(
                        "page",
                        {"type": "string"},
                        "page number; not a positive integer → 1",
                    ),
                    query_param("limit", {"type": "string"}, "page size; not in 1-100 → 30"),
                    query_param(
                        "prereleases",
                        {"type": "string"},
                        "include prereleases (true/false)",
                    ),
                    query_param(
                        "drafts",
                        {"type": "string"},
                        "include drafts; honoured for repository administrators only",
                    ),
                    KEY_PARAM,
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
                    {
                        **query_param(
                            "version",
                            {"type": "string", "pattern": _VERSION},
                            "current version, SemVer, optional `v`; missing or unparsable: 400",
                        ),
                        "required": True,
                    },
                    query_param(
                        "platform",
                        {"type": "string"},
                        "darwin, macos, windows, win32, linux",
                    ),
                    query_param("arch", {"type": "string"}, "arm64 or any other value (x64 list)"),
                    query_param(
                        "channel", {"type": "string"}, "stable (default) or any other value"
                    ),
                    KEY_PARAM,
                ],
                {
                    "200": json_content(
                        "A newer release with a matching asset",
                        ref("AppUpdateResponse"),
                    ),
                    "204": {"description": "No newer release or no matching asset (empty body)"},
                    "304": NOT_MODIFIED,
                    "400": error(
                        "ValInvalidInput: Invalid version format: <version> (also when missing)"
                    ),
                    **ACCESS_ERRORS,
                },
            )
        },
        f"{base}/latest": {
            "get": operation(
                "latestRelease",
                "Latest release of a channel",
                [
                    query_param(
                        "channel",
                        {"type": "string"},
                        "stable (default) excludes prereleases",
                    ),
                    KEY_PARAM,
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
                    path_param("tag", description="a positive int64 is a release id, else a tag"),
                    KEY_PARAM,
                ],
                {
                    "200": json_content("The release", RELEASE_REF),
                    "304": NOT_MODIFIED,
                    **ACCESS_ERRORS,
                },
            )
        },
    }
