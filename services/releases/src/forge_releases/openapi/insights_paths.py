"""Insights in the OpenAPI document (insights/handlers.py, docs/insights.md "API")."""

from __future__ import annotations

from typing import Any

from forge_common.openapi import error, json_content, query_param

from ..insights.params import BY, MAX_DAYS, MAX_HOURS
from .parts import operation

INSIGHTS = "/api/v2/repos/{owner}/{repo}/insights"
_COUNTS = {"type": "array", "items": {"type": "integer", "minimum": 0}}
_SERIES = {
    "type": "object",
    "required": ["total", "series"],
    "properties": {
        "total": {"type": "integer", "minimum": 0},
        "series": {
            "type": "array",
            "description": "one per value of `by`, the busiest first; counts align with buckets",
            "items": {
                "type": "object",
                "required": ["value", "total", "counts"],
                "properties": {
                    "value": {"type": "string", "description": "'' when not said or nothing"},
                    "total": {"type": "integer", "minimum": 0},
                    "counts": _COUNTS,
                },
            },
        },
    },
}
_BODY = {
    "type": "object",
    "required": ["interval", "by", "from", "to", "buckets", "checks", "downloads"],
    "properties": {
        "interval": {"enum": ["day", "hour"]},
        "by": {"enum": list(BY)},
        "from": {"type": "string"},
        "to": {"type": "string"},
        "buckets": {
            "type": "array",
            "items": {"type": "string"},
            "description": "each day (YYYY-MM-DD) or hour (YYYY-MM-DDTHH:00:00Z) of the window",
        },
        "checks": _SERIES,
        "downloads": _SERIES,
    },
}
_DESCRIPTION = (
    "Update checks, feed answers and completed downloads counted per day (or hour, for the last "
    "48 hours), split by one dimension. Only the repository's admins and publishers (write "
    "access) may read it; every other caller gets the 404 RepoNotFound of a repository that does "
    "not exist."
)

INSIGHTS_PATHS: dict[str, Any] = {
    INSIGHTS: {
        "get": {
            **operation(
                "getInsights",
                "Adoption and downloads over time",
                [
                    query_param(
                        "from",
                        {"type": "string"},
                        "first day (YYYY-MM-DD) or hour (RFC 3339); default: 30 days or 48 "
                        f"hours before `to`; at most {MAX_DAYS} days or {MAX_HOURS} hours",
                    ),
                    query_param(
                        "to", {"type": "string"}, "last day or hour, inclusive; default: now"
                    ),
                    query_param("interval", {"enum": ["day", "hour"]}, "bucket size; default day"),
                    query_param("by", {"enum": list(BY)}, "the split; default version"),
                ],
                {
                    "200": json_content(
                        "Counts",
                        _BODY,
                        headers={"Cache-Control": {"schema": {"const": "no-store"}}},
                    ),
                    "400": error("ValInvalidInput: a bad from, to, interval or by"),
                    "404": error("RepoNotFound: no repository, or not an admin or publisher"),
                },
                tags="insights",
            ),
            "description": _DESCRIPTION,
        }
    }
}
