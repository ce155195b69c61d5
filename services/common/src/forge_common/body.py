"""Reading request bodies and validating their fields: 400 for malformed JSON, 413 for an
oversize body, 422 naming the field for a missing or wrongly typed value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

from .errors import InvalidInput, PayloadTooLarge, Unprocessable

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MAX = 2**63 - 1


async def read_json_object(request: web.Request) -> Mapping[str, Any]:
    """The body as a JSON object; anything else is 400 (malformed) or 422 (not an object)."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise PayloadTooLarge("Request body too large") from None
    try:
        data = orjson.loads(raw) if raw.strip() else None
    except orjson.JSONDecodeError:
        raise InvalidInput("Malformed JSON body") from None
    if not isinstance(data, dict):
        raise Unprocessable("Request body must be a JSON object", field="body")
    return data


def optional_str(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Unprocessable(f"{name} must be a string", field=name)
    return value


def required_str(data: Mapping[str, Any], name: str) -> str:
    value = optional_str(data, name)
    if value is None:
        raise Unprocessable(f"{name} is required", field=name)
    return value


def optional_int(
    data: Mapping[str, Any], name: str, *, low: int = INT32_MIN, high: int = INT32_MAX
) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    # bool is an int in Python; in JSON it is not a number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unprocessable(f"{name} must be an integer", field=name)
    if not low <= value <= high:
        raise Unprocessable(f"{name} must be between {low} and {high}", field=name)
    return value


def optional_bool(data: Mapping[str, Any], name: str) -> bool | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise Unprocessable(f"{name} must be a boolean", field=name)
    return value


def optional_list(data: Mapping[str, Any], name: str) -> list[Any] | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise Unprocessable(f"{name} must be a list", field=name)
    return value
