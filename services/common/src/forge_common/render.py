"""JSON rendering: orjson bytes, timestamps as RFC 3339 UTC whole seconds with `Z`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web


def rfc3339(moment: datetime) -> str:
    """`2026-01-02T03:04:05Z`: the form Squirrel.Mac and Tauri both parse (no fractions)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _default(value: object) -> Any:
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"cannot render {type(value).__name__} as JSON")


def dumps(data: object) -> bytes:
    return orjson.dumps(data, default=_default, option=orjson.OPT_PASSTHROUGH_DATETIME)


def json_response(
    data: object, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=dumps(data), status=status, headers=headers, content_type="application/json"
    )
