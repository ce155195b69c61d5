"""The OpenAPI 3.1 documents of the two compat shapes (docs/compat.md), data beside the handlers
they describe (gitea.yaml, github.yaml):

    GET /api/v1/repos/openapi.json   the Gitea shape   (`/api/v1/openapi.json` is the orgs API's)
    GET /api/v3/openapi.json         the GitHub shape, with /{owner}/{repo}/releases.atom
"""

from __future__ import annotations

from typing import Any

from forge_common import openapi
from forge_common.openapi import document_handler

GITEA_DOC = "/api/v1/repos/openapi.json"
GITHUB_DOC = "/api/v3/openapi.json"
GITEA = "/api/v1/repos/{owner}/{repo}"
GITHUB = "/api/v3/repos/{owner}/{repo}"


def build_gitea() -> dict[str, Any]:
    return openapi.load(__package__ or "", "gitea.yaml")


def build_github() -> dict[str, Any]:
    return openapi.load(__package__ or "", "github.yaml")


serve_gitea = document_handler(build_gitea)
serve_github = document_handler(build_github)
