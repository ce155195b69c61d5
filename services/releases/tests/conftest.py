"""Fixtures of the releases tests: a client of the releases app, optionally with the cache on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_common.keys import NOTIFICATIONS
from forge_common.notifications import NotificationOptions
from forge_releases.options import Options
from forge_releases.service import create_app
from forge_testing.s3 import S3Server, running_s3
from forge_testing.server import ForgeTestServer

from .support import FAST, access_world

MakeClient = Callable[..., Awaitable[TestClient[web.Request, web.Application]]]


@pytest.fixture
def make_client(settings: Settings, aiohttp_client: Any) -> MakeClient:
    """`await make_client()` → a test client of the releases app, tuned by `options` and
    `notifications` (a fast LISTEN connection unless told otherwise); `wait_cache=True` returns
    once notifications are known to arrive (so the cache is in use)."""

    async def _make(
        *,
        wait_cache: bool = False,
        options: Options | None = None,
        notifications: NotificationOptions = FAST,
        app_settings: Settings | None = None,
    ) -> TestClient[web.Request, web.Application]:
        app = create_app(app_settings or settings, options, notifications)
        # served as `forge serve` serves it: the update check's fast path included
        client: TestClient[web.Request, web.Application] = await aiohttp_client(
            ForgeTestServer(app)
        )
        if wait_cache:
            await asyncio.wait_for(app[NOTIFICATIONS].listening.wait(), 10)
        return client

    return _make


@pytest.fixture
async def matrix_client(make_client: MakeClient, load: Any) -> Any:
    """A client of the access world (support.access_world): every caller × every repository kind."""
    await load(access_world())
    return await make_client()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3 server for the run (moto in server mode, or FORGE_TEST_S3_ENDPOINT)."""
    with running_s3() as server:
        yield server
