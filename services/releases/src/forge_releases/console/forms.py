"""What the console's forms share: reading fields, errors by field, the page answer with the
console's script allowed, and the JSON answer the script reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web
from forge_common.errors import ApiError, Unprocessable
from forge_common.pages import page_response
from forge_common.pages.render import page_headers

SCRIPT_PATH = "/-/console.js"
# The console's pages may load our one script (and it may post back to us): still no inline
# script, no other origin. Public pages keep the no-script policy of forge_common.pages.
_SCRIPT_SOURCES = "default-src 'none'; script-src 'self'; connect-src 'self';"
# What the script sends, so an upload's answer is JSON for it and a page for a plain form.
SCRIPT_HEADER = "X-Forge-Console"
NO_STORE = {"Cache-Control": "no-store"}


def console_headers(request: web.Request, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    headers = page_headers(request)
    csp = headers["Content-Security-Policy"].replace("default-src 'none';", _SCRIPT_SOURCES, 1)
    return {"Content-Security-Policy": csp, **(extra or {})}


def console_page(
    request: web.Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    extra: Mapping[str, str] | None = None,
) -> web.Response:
    """A console page: private, never stored, our script allowed."""
    headers = console_headers(request, {**NO_STORE, **(extra or {})})
    response = page_response(request, template, context, status=status, headers=headers)
    response.headers["Cache-Control"] = "no-store"
    return response


def field_errors(error: ApiError, default_field: str) -> dict[str, str]:
    """The error of a write as words next to the field it is about (a 422 names it; a conflict
    or other refusal goes next to `default_field`)."""
    field = error.field if isinstance(error, Unprocessable) and error.field else default_field
    return {field: error.message}


def checkbox(form: Mapping[str, Any], name: str) -> bool:
    return form.get(name) in ("on", "true", "1")


def is_script(request: web.Request) -> bool:
    return request.headers.get(SCRIPT_HEADER) == "1"
