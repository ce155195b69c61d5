"""The update feeds of the OpenAPI document: each feed's record holds its operation
(feeds/registry.py)."""

from __future__ import annotations

from typing import Any

from ..feeds.registry import FEEDS


def feed_paths() -> dict[str, Any]:
    return {feed.path: {"get": dict(feed.operation)} for feed in FEEDS}
