"""The document served at /api/v2/openapi.json: release_api.yaml (the read side, the downloads,
the keys, insights and the publishing side) and the update feeds' operations, each from its
feed's record (feeds/registry.py), so a feed is documented where it is registered."""

from __future__ import annotations

from typing import Any

from forge_common import openapi

from .feed_paths import feed_paths
from .safety_paths import audit_paths, safe_check


def build() -> dict[str, Any]:
    document = openapi.load(__package__ or "", "release_api.yaml")
    paths = document["paths"]
    document["paths"] = {**paths, **safe_check(paths), **audit_paths(), **feed_paths()}
    return document
