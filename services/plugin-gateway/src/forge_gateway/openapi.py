"""The OpenAPI 3.1 document of the gateway's public routes (docs/plugins.md "Admin endpoints" and
"HTTP proxying"), served at /api/v1/plugins/openapi.json: under the plugin routes' prefix, which
the reverse proxy sends to the gateway, and never a plugin route (those have a segment after the
plugin's name). /api/v1/openapi.json is the orgs service's; /internal/ is not public and is left
out.

Data in openapi.yaml, beside the handlers it describes; tests validate it with
openapi-spec-validator, check that it lists exactly the routes the application serves and that
the responses they receive match it.
"""

from __future__ import annotations

from forge_common import openapi
from forge_common.openapi import JSON, document_handler

DOCUMENT_PATH = "/api/v1/plugins/openapi.json"
# Every method an aiohttp "*" route answers, as OpenAPI names them: the plugin route's.
PROXIED_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def document() -> JSON:
    return openapi.load(__package__ or "", "openapi.yaml")


# GET /api/v1/plugins/openapi.json, with an ETag (304 on a matching If-None-Match).
serve = document_handler(document)
