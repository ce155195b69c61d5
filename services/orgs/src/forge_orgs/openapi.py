"""The OpenAPI 3.1 document of this service (organizations, users, teams, repositories, tokens),
served at /api/v1/openapi.json: data in openapi.yaml, beside the code it describes; tests
validate it with openapi-spec-validator, check that it lists exactly the routes the application
serves and that every response the tests receive matches its schema. Its group-name pattern is
payloads.py's `MAX_GROUP_NAME` (a test holds them together).
"""

from __future__ import annotations

from aiohttp import web
from forge_common import openapi
from forge_common.auth import viewer_of
from forge_common.openapi import JSON

from .caching import cached_json

_DOCUMENT = openapi.load(__package__ or "", "openapi.yaml")


def document() -> JSON:
    return _DOCUMENT


async def serve(request: web.Request) -> web.Response:
    return cached_json(request, viewer_of(request), document())
