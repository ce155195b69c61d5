"""Fixtures of the releases tests: a client of the releases app, optionally with the cache on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.app import create_app
from forge_releases.keys import CHANGE_LISTENER
from forge_releases.options import Options

from .support import FAST

MakeClient = Callable[..., Awaitable[TestClient[web.Request, web.Application]]]


@pytest.fixture
def make_client(settings: Settings, aiohttp_client: Any) -> MakeClient:
    """`await make_client()` → a test client of the releases app, tuned by `options` (a fast
    change listener unless told otherwise); `wait_cache=True` returns once the change listener is
    connected (so the cache is in use)."""

    async def _make(
        *,
        wait_cache: bool = False,
        options: Options = FAST,
        app_settings: Settings | None = None,
    ) -> TestClient[web.Request, web.Application]:
        app = create_app(app_settings or settings, options)
        client: TestClient[web.Request, web.Application] = await aiohttp_client(app)
        if wait_cache:
            await asyncio.wait_for(app[CHANGE_LISTENER].connected.wait(), 10)
        return client

    return _make
