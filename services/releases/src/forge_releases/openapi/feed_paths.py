"""The update feeds of the OpenAPI document: each feed's record holds its operation,
and so does each route of files a feed names (feeds/registry.py)."""

from __future__ import annotations

from typing import Any

from ..feeds.feed import Feed, FileRoute
from ..feeds.registry import FEEDS, FILES


def feed_paths() -> dict[str, Any]:
    routes: list[Feed | FileRoute] = [*FEEDS, *FILES]
    return {route.path: {"get": dict(route.operation)} for route in routes}
