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
from forge_releases.keys import CHANGE_LISTENER, LISTENER_TUNING
from forge_releases.listener import ListenerTuning

from .support import FAST

MakeClient = Callable[..., Awaitable[TestClient[web.Request, web.Application]]]


@pytest.fixture
def make_client(settings: Settings, aiohttp_client: Any) -> MakeClient:
    """`await make_client()` → a test client of the releases app; `wait_cache=True` returns once
    the change listener is connected (so the cache is in use)."""

    async def _make(
        *,
        wait_cache: bool = False,
        tuning: ListenerTuning = FAST,
        app_settings: Settings | None = None,
    ) -> TestClient[web.Request, web.Application]:
        app = create_app(app_settings or settings)
        app[LISTENER_TUNING] = tuning
        client: TestClient[web.Request, web.Application] = await aiohttp_client(app)
        if wait_cache:
            await asyncio.wait_for(app[CHANGE_LISTENER].connected.wait(), 10)
        return client

    return _make
