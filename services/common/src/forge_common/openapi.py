"""The envelope every service's OpenAPI 3.1 document shares: version, info, servers and the one
way callers authenticate (docs/http.md "Authentication"); each service supplies its paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TOKEN_SECURITY = {
    "token": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "`token <t>` or `Bearer <t>`",
    }
}


def document(
    *,
    title: str,
    version: str,
    server: str,
    schemas: Mapping[str, Any],
    paths: Mapping[str, Any],
    description: str | None = None,
) -> dict[str, Any]:
    """An OpenAPI document in which every operation may be called anonymously or with a token."""
    info: dict[str, Any] = {"title": title, "version": version}
    if description is not None:
        info["description"] = description
    return {
        "openapi": "3.1.0",
        "info": info,
        "servers": [{"url": server}],
        "components": {"securitySchemes": TOKEN_SECURITY, "schemas": schemas},
        "security": [{}, {"token": []}],
        "paths": paths,
    }
