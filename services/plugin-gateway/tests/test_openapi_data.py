"""The gateway's OpenAPI document is data (openapi.yaml) that openapi-spec-validator accepts as
OpenAPI 3.1."""

from __future__ import annotations

from forge_gateway.openapi import document
from openapi_spec_validator import validate


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(document())
