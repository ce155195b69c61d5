"""The orgs service's OpenAPI document is data (openapi.yaml) that openapi-spec-validator accepts
as OpenAPI 3.1, and its group-name pattern is the limit payloads.py enforces."""

from __future__ import annotations

import re

from forge_orgs.openapi import document
from forge_orgs.payloads import MAX_GROUP_NAME
from openapi_spec_validator import validate


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(document())


def test_the_documented_group_name_is_as_long_as_payloads_allows() -> None:
    patterns = {
        schema["pattern"]
        for schema in _schemas(document())
        if schema.get("pattern", "").startswith(r"^\s*[^\s\x00]")
    }
    assert patterns, "no group-name pattern in the document"
    for pattern in patterns:
        assert re.fullmatch(pattern, "a" * MAX_GROUP_NAME)
        assert not re.fullmatch(pattern, "a" * (MAX_GROUP_NAME + 1))


def _schemas(node: object) -> list[dict[str, object]]:
    """Every mapping in the document that has a `pattern`."""
    if isinstance(node, dict):
        found = [node] if isinstance(node.get("pattern"), str) else []
        return found + [s for value in node.values() for s in _schemas(value)]
    if isinstance(node, list):
        return [s for value in node for s in _schemas(value)]
    return []
