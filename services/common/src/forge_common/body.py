"""Reading request bodies and validating their fields: 408 for a body that does not arrive in
time, 400 for malformed JSON, a malformed form or a body cut short, 413 for an oversize body, 415
for a form that is not urlencoded UTF-8, 422 naming the field for a missing or wrongly typed value
or for text PostgreSQL cannot store (NUL).

The one JSON body reader (`read_json_object`) and the one form body reader (`read_form`): every
route reads its body through one of them, so a rule about text holds on every path."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDict, MultiDictProxy

from .errors import (
    InvalidInput,
    PayloadTooLarge,
    RequestTimeout,
    Unprocessable,
    UnsupportedMediaType,
)

log = logging.getLogger(__name__)
H = TypeVar("H")
_STREAMS_BODY = "forge_streams_body"


def streams_body(handler: H) -> H:
    """Mark a handler that reads `request.content` itself under limits of its own (uploads): the
    middleware then does not receive its body first."""
    setattr(handler, _STREAMS_BODY, True)
    return handler


def wants_body_received(request: web.Request) -> bool:
    return request.body_exists and not getattr(request.match_info.handler, _STREAMS_BODY, False)


async def receive_body(request: web.Request, within: float) -> None:
    """Receive the whole body within `within` seconds, kept for the handler's `read()`.

    The one body-read deadline of every route (the middleware calls it): a client that stalls
    after its headers, or drops mid-body, costs one line of log, never a held task or a traceback.
    """
    try:
        async with asyncio.timeout(within):
            await request.read()
    except TimeoutError:
        log.info("request body not received within %s s; given up", within)
        raise RequestTimeout() from None
    except web.HTTPRequestEntityTooLarge:
        raise PayloadTooLarge("Request body too large") from None
    except (ConnectionError, HttpProcessingError, asyncio.IncompleteReadError) as exc:
        log.info("request body cut short (%s)", type(exc).__name__)
        raise InvalidInput("Request body incomplete") from None


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
        data = _with_huge_numbers(raw)
    if not isinstance(data, dict):
        raise Unprocessable("Request body must be a JSON object", field="body")
    if _JSON_NUL in raw:  # only an escape can put a NUL in JSON text: rare, so walk only then
        _refuse_nul(data, "")
    return data


_JSON_NUL = b"\\u0000"
NUL_PROBLEM = "must not contain NUL characters"


def _refuse_nul(value: Any, where: str) -> None:
    """422 naming the field (its top-level name) whose text holds a NUL, which PostgreSQL cannot
    store in text: one rule for every JSON text field, whatever the handler does next."""
    if isinstance(value, str):
        if "\x00" in value:
            raise Unprocessable(f"{where or 'body'} {NUL_PROBLEM}", field=where or "body")
    elif isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                raise Unprocessable(f"field names {NUL_PROBLEM}", field="body")
            _refuse_nul(item, where or key)
    elif isinstance(value, list):
        for item in value:
            _refuse_nul(item, where)


FORM_TYPE = "application/x-www-form-urlencoded"
_UTF8 = frozenset({"utf-8", "utf8"})
MAX_FORM_FIELDS = 200  # the biggest form of ours has a dozen


async def read_form(request: web.Request) -> MultiDictProxy[str]:
    """A page form's body: `application/x-www-form-urlencoded` in UTF-8, what browsers send for
    every form of ours but the console's upload (which streams its own multipart body). Anything
    else is 415; bytes or escapes that are not UTF-8, and NUL in a name or value, are 400
    (docs/http.md "Forms"). aiohttp's own `post()` is not used: it decodes under whatever charset
    the request names and reads multipart bodies, and failed on both with a 500."""
    raw = await request.read()
    if not raw:
        return MultiDictProxy(MultiDict())
    charset = (request.charset or "utf-8").lower()
    if request.content_type != FORM_TYPE or charset not in _UTF8:
        raise UnsupportedMediaType("Forms are sent as application/x-www-form-urlencoded, UTF-8")
    try:
        pairs = parse_qsl(
            raw.decode("utf-8"),
            keep_blank_values=True,
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_FORM_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):  # ValueError: more fields than MAX_FORM_FIELDS
        raise InvalidInput("Malformed form body") from None
    if any("\x00" in name or "\x00" in value for name, value in pairs):
        raise InvalidInput(f"Form fields {NUL_PROBLEM}")
    return MultiDictProxy(MultiDict(pairs))


class _OutOfRange:
    """A JSON number no field can hold (hundreds of digits, 1e400): valid JSON, so the field that
    holds it is named in a 422 instead of the whole body being called malformed."""

    def __repr__(self) -> str:
        return "<number out of range>"


OUT_OF_RANGE = _OutOfRange()
_MAX_INT_DIGITS = 20  # more than any int64 or uint64 has


def _with_huge_numbers(raw: bytes) -> Any:
    """Parse what orjson refused, keeping numbers it cannot represent as OUT_OF_RANGE; anything
    else it refused (bad syntax, invalid UTF-8, lone surrogates, nesting too deep) is still 400."""
    try:
        data = json.loads(
            raw.decode("utf-8"),
            parse_int=_bounded_int,
            parse_float=_bounded_float,
            parse_constant=_no_constant,
        )
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError among them
        raise InvalidInput("Malformed JSON body") from None
    if not _encodable(data):
        raise InvalidInput("Malformed JSON body")
    return data


def _bounded_int(text: str) -> int | _OutOfRange:
    # checked before int(): Python refuses to convert over 4,300 digits
    return OUT_OF_RANGE if len(text.lstrip("-")) > _MAX_INT_DIGITS else int(text)


def _bounded_float(text: str) -> float | _OutOfRange:
    value = float(text)
    return value if math.isfinite(value) else OUT_OF_RANGE


def _no_constant(text: str) -> None:
    raise ValueError(f"{text} is not JSON")  # NaN, Infinity: Python extensions, not JSON


def _encodable(value: Any) -> bool:
    """False when a string holds a lone surrogate (a `\\ud800` escape), which PostgreSQL refuses."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_encodable(k) and _encodable(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_encodable(item) for item in value)
    return True


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
    if value is OUT_OF_RANGE:
        raise Unprocessable(f"{name} must be between {low} and {high}", field=name)
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
