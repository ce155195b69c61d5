"""The download matrix: every download test runs against each storage backend and
serving mode, with real parts: a folder sent by aiohttp's sendfile, a folder sent by real nginx
(X-Accel-Redirect, the deploy template), S3 (moto server) behind a 302 to a presigned URL, and S3
streamed through the service.

`settings_for_mode` gives the app's settings; `through_mode` wraps the test client so requests go
where a user's would (through nginx in the nginx mode; redirects are followed by the client).
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from forge_common.config import Settings
from forge_testing.nginx import find_nginx, running_nginx
from forge_testing.s3 import S3Server

ROOT = Path(__file__).resolve().parents[3]
MODES = ["folder-direct", "folder-nginx", "s3-redirect", "s3-stream"]
ACCEL_PREFIX = "/_forge_storage/"


def settings_for_mode(mode: str, base: Settings, s3: S3Server | None) -> Settings:
    if mode == "folder-direct":
        return base
    if mode == "folder-nginx":
        # nginx's workers run as another user: the folder must be readable by it
        root = Path(tempfile.mkdtemp(prefix="forge-accel-"))
        root.chmod(0o755)
        return dataclasses.replace(base, storage_path=root, storage_accel_prefix=ACCEL_PREFIX)
    assert s3 is not None
    return dataclasses.replace(
        base, storage_url=s3.url(), s3=s3.settings, storage_redirect=mode == "s3-redirect"
    )


@contextlib.contextmanager
def running_proxy(releases_port: int, storage_root: Path) -> Iterator[int]:
    """nginx from deploy/nginx in front of the releases test server; yields its port."""
    nginx = find_nginx()
    if nginx is None:
        pytest.skip("nginx is not installed (make deploy-tools installs it as root)")
    values = {
        "RELEASES_UPSTREAM": f"127.0.0.1:{releases_port}",
        "ORGS_UPSTREAM": "127.0.0.1:1",
        "GATEWAY_UPSTREAM": "127.0.0.1:2",
        "STORAGE_ROOT": str(storage_root.resolve()),
    }
    with running_nginx(nginx, values) as port:
        yield port


class ProxiedClient:
    """The parts of aiohttp's TestClient the download tests use, sent through nginx."""

    def __init__(self, inner: Any, port: int) -> None:
        self._inner = inner
        self.app = inner.app
        self._base = f"http://127.0.0.1:{port}"
        self._session = aiohttp.ClientSession()

    def get(self, path: str, **kw: Any) -> Any:
        return self._session.get(self._base + path, **kw)

    def head(self, path: str, **kw: Any) -> Any:
        return self._session.head(self._base + path, **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self._session.post(self._base + path, **kw)

    async def close(self) -> None:
        if not self._session.closed:
            await self._session.close()
        await self._inner.close()
