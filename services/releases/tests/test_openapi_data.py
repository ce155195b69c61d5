"""The release service's OpenAPI documents are data (openapi/release_api.yaml, compat/gitea.yaml,
compat/github.yaml) that openapi-spec-validator accepts as OpenAPI 3.1, and the update feeds'
operations, made from their records (feeds/registry.py), say what every other operation says of
access and of the errors any request may meet (openapi/parts.py beside the YAML)."""

from __future__ import annotations

from typing import Any

import pytest
from forge_releases.compat.openapi import build_gitea, build_github
from forge_releases.feeds.registry import FEEDS
from forge_releases.openapi.document import build
from openapi_spec_validator import validate


@pytest.mark.parametrize("document", [build, build_gitea, build_github])
def test_each_document_is_valid_openapi_3_1(document: Any) -> None:
    built = document()
    assert built["openapi"] == "3.1.0"
    validate(built)


def test_the_feeds_operations_say_what_the_documents_other_operations_say() -> None:
    paths = build()["paths"]
    check = paths["/api/v2/repos/{owner}/{repo}/releases/update"]["get"]
    for feed in FEEDS:
        operation = paths[feed.path]["get"]
        assert operation["description"] == check["description"], feed.path
        assert operation["parameters"][:2] == check["parameters"][:2], feed.path
        for status in ("408", "413", "429"):  # what the middleware answers before any handler
            assert operation["responses"][status] == check["responses"][status], feed.path
