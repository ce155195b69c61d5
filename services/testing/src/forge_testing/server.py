"""A test server serving an application the way `forge serve` does (serving.ForgeRunner): our
connection handler and the application's fast paths (fast_path.py) included."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
from forge_common.serving import ForgeRunner


class ForgeTestServer(TestServer):
    async def _make_runner(self, **kwargs: Any) -> web.BaseRunner:
        # as `forge serve`: no access log, and a handler is not cancelled when its client goes
        # away (aiohttp's test server would cancel it, hiding what production does then)
        return ForgeRunner(
            self.app, **{**kwargs, "access_log": None, "handler_cancellation": False}
        )
