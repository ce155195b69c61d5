"""The OpenAPI 3.1 document of the gateway's public routes (docs/plugins.md "Admin endpoints" and
"HTTP proxying"), served at /api/v1/plugins/openapi.json: under the plugin routes' prefix, which
the reverse proxy sends to the gateway, and never a plugin route (those have a segment after the
plugin's name). /api/v1/openapi.json is the orgs service's; /internal/ is not public and is left
out.

Built here, next to the handlers it describes; tests check that it lists exactly the routes the
application serves and that the responses they receive match it.
"""

from __future__ import annotations

from typing import Any

from forge_common import openapi
from forge_common.openapi import (
    JSON,
    document_handler,
    error_responses,
    json_content,
    object_schema,
    path_param,
    ref,
)

DOCUMENT_PATH = "/api/v1/plugins/openapi.json"
ADMIN = "/api/v1/admin/plugins"
# Every method an aiohttp "*" route answers, as OpenAPI names them: the plugin route's.
PROXIED_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_STR = {"type": "string"}
_NULL_STR = {"type": ["string", "null"]}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
_TIME = {"type": "string", "format": "date-time", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"}
_NULL_TIME = {**_TIME, "type": ["string", "null"]}
_CACHE_HEADERS = {"ETag": {"schema": _STR}, "Cache-Control": {"schema": _STR}}


SCHEMAS: JSON = {
    "Manifest": object_schema(
        {
            "name": _STR,
            "version": _STR,
            "description": _STR,
            "subscribed_events": {"type": "array", "items": _STR},
            "routes": {
                "type": "array",
                "items": object_schema({"method": _STR, "path": _STR, "description": _STR}),
            },
            "required_permissions": {"type": "array", "items": _STR},
            "license_tier": _STR,
        }
    ),
    "Health": object_schema(
        {
            "healthy": _BOOL,
            "status": _STR,
            "details": {"type": "object", "additionalProperties": _STR},
            "error": _NULL_STR,
            "checked_at": _TIME,
            "latency_ms": {"type": "number", "minimum": 0},
        }
    ),
    "Breaker": object_schema(
        {
            "state": {"enum": ["closed", "open", "half_open"]},
            "recent_calls": {**_INT, "minimum": 0},
            "recent_failures": {**_INT, "minimum": 0},
            "consecutive_health_failures": {**_INT, "minimum": 0},
            "times_opened": {**_INT, "minimum": 0},
            "retry_after": {"type": ["integer", "null"]},
            "reason": _NULL_STR,
        }
    ),
    "Plugin": object_schema(
        {
            "name": _STR,
            "address": _STR,
            "enabled": _BOOL,
            "tls": _BOOL,
            "state": {
                "enum": [
                    "connecting",
                    "ready",
                    "unhealthy",
                    "down",
                    "failed",
                    "refused",
                    "disabled",
                    "stopped",
                ]
            },
            "error": _NULL_STR,
            "reported_protocol_version": {"type": ["integer", "null"]},
            "negotiated_protocol_version": {"type": ["integer", "null"]},
            "initialized_at": _NULL_TIME,
            "initialize_count": {**_INT, "minimum": 0},
            "manifest": {"oneOf": [ref("Manifest"), {"type": "null"}]},
            "health": {"oneOf": [ref("Health"), {"type": "null"}]},
            "breaker": ref("Breaker"),
            "config_keys": {"type": "array", "items": _STR},
            "timeouts": object_schema(
                {
                    rpc: {"type": "number", "exclusiveMinimum": 0}
                    for rpc in (
                        "Initialize",
                        "Shutdown",
                        "HealthCheck",
                        "GetManifest",
                        "OnEvent",
                        "HandleHTTP",
                    )
                }
            ),
            "deliveries": object_schema(
                {"pending": {**_INT, "minimum": 0}, "dead": {**_INT, "minimum": 0}}
            ),
        }
    ),
    "Delivery": object_schema(
        {
            "id": {**_INT, "minimum": 1},
            "event_id": {"type": "string", "format": "uuid"},
            "event_type": _STR,
            "status": {"enum": ["pending", "delivered", "skipped", "dead"]},
            "attempts": {**_INT, "minimum": 0},
            "next_attempt_at": {**_NULL_TIME, "description": "pending deliveries only"},
            "last_error": _NULL_STR,
            "created_at": _TIME,
            "finished_at": _NULL_TIME,
        }
    ),
    "Attempt": object_schema(
        {
            "attempt": {**_INT, "minimum": 1},
            "started_at": _TIME,
            "finished_at": _TIME,
            "outcome": {"enum": ["delivered", "retry", "dead", "released"]},
            "error": _NULL_STR,
        }
    ),
    "Redelivered": object_schema({"redelivered": {**_INT, "minimum": 0}}),
    "Error": {
        "type": "object",
        "properties": {"message": _STR, "errors": {"type": "array", "items": _STR}},
        "required": ["message"],
        "additionalProperties": False,
    },
}
SCHEMAS["DeliveryWithAttempts"] = {
    **SCHEMAS["Delivery"],
    "properties": {
        **SCHEMAS["Delivery"]["properties"],
        "attempt_log": {"type": "array", "items": ref("Attempt")},
    },
    "required": [*SCHEMAS["Delivery"]["required"], "attempt_log"],
}

_ERRORS = {
    "304": "Not modified (If-None-Match matched the ETag)",
    "400": "ValInvalidInput: a bad `status` or `limit`, or a request body cut short",
    "401": "AuthTokenMissing (admin endpoints), or a malformed or unknown token",
    "403": "PermissionDenied: not a site administrator",
    "404": "Plugin not found, Delivery not found",
    "408": "The request body did not arrive in time",
    "413": "Request body too large",
}
# What the middleware answers on any route before the handler runs.
_REQUEST = "400 401 408 413"
_ADMIN = "401 403 404"


def _op(op_id: str, summary: str, success: str, schema: JSON, errors: str, **extra: Any) -> JSON:
    statuses = [*errors.split(), *_REQUEST.split()]
    return {
        "operationId": op_id,
        "summary": summary,
        "responses": {
            success: json_content(summary, schema),
            **error_responses(statuses, _ERRORS, _CACHE_HEADERS),
        },
        **extra,
    }


_PLUGIN = path_param("plugin", description="the plugin's name from the plugins file")
_DELIVERY = path_param(
    "id", {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}, "a delivery id (else 404)"
)
_ADMIN_ONLY = {"security": [{"token": []}], "tags": ["admin"]}

# A plugin's own answer: any status and body the plugin sends (docs/plugins.md "HTTP proxying"),
# or the gateway's errors with the version-1 error body.
_PROXIED = {
    "tags": ["plugins"],
    "parameters": [
        _PLUGIN,
        path_param("path", description="a path the plugin's manifest declares (may hold `/`)"),
    ],
    "responses": {
        "default": {
            "description": "The plugin's answer (any status, headers and body it sends), or the "
            "gateway's: 404 unknown plugin or undeclared path, 405 with Allow, 413 body too "
            "large, 502 the plugin failed or answered unusably, 503 (Retry-After) the plugin is "
            "down or its circuit open, 504 the plugin did not answer in time",
            "content": {"*/*": {"schema": {}}},
        }
    },
}

PATHS: JSON = {
    DOCUMENT_PATH: {
        "get": _op(
            "gatewayOpenapi",
            "This document",
            "200",
            {"type": "object", "required": ["openapi", "paths"]},
            "304",
            tags=["meta"],
        )
    },
    ADMIN: {
        "get": _op(
            "listPlugins",
            "Every configured plugin's state (site administrators)",
            "200",
            {"type": "array", "items": ref("Plugin")},
            "401 403",
            **_ADMIN_ONLY,
        )
    },
    f"{ADMIN}/{{plugin}}/deliveries": {
        "get": _op(
            "listDeliveries",
            "A plugin's deliveries, newest first",
            "200",
            {"type": "array", "items": ref("Delivery")},
            _ADMIN,
            parameters=[
                _PLUGIN,
                {
                    "name": "status",
                    "in": "query",
                    "required": False,
                    "schema": {"enum": ["", "pending", "delivered", "skipped", "dead"]},
                    "description": "empty or absent: every status; anything else is 400",
                },
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {
                        "type": "string",
                        "pattern": "^0*([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$",
                    },
                    "description": "a whole number from 1 to 500 (default 50); else 400",
                },
            ],
            **_ADMIN_ONLY,
        )
    },
    f"{ADMIN}/{{plugin}}/deliveries/{{id}}": {
        "get": _op(
            "getDelivery",
            "One delivery and every attempt made, oldest first",
            "200",
            ref("DeliveryWithAttempts"),
            _ADMIN,
            parameters=[_PLUGIN, _DELIVERY],
            **_ADMIN_ONLY,
        )
    },
    f"{ADMIN}/{{plugin}}/deliveries/redeliver": {
        "post": _op(
            "redeliverDead",
            "Every dead letter of the plugin again",
            "202",
            ref("Redelivered"),
            _ADMIN,
            parameters=[_PLUGIN],
            **_ADMIN_ONLY,
        )
    },
    f"{ADMIN}/{{plugin}}/deliveries/{{id}}/redeliver": {
        "post": _op(
            "redeliverOne",
            "One finished delivery again (404 when there is none)",
            "202",
            ref("Redelivered"),
            _ADMIN,
            parameters=[_PLUGIN, _DELIVERY],
            **_ADMIN_ONLY,
        )
    },
    "/api/v1/plugins/{plugin}/{path}": {
        method: {
            **_PROXIED,
            "operationId": f"plugin{method.capitalize()}",
            "summary": "A plugin route",
        }
        for method in PROXIED_METHODS
    },
}


def document() -> JSON:
    return openapi.document(
        title="forge plugin gateway",
        version="1",
        description="Plugin routes and the plugin admin API (docs/plugins.md).",
        server="/",
        schemas=SCHEMAS,
        paths=PATHS,
    )


# GET /api/v1/plugins/openapi.json, with an ETag (304 on a matching If-None-Match).
serve = document_handler(document)
