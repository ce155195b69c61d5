"""A real S3-compatible server for tests and benchmarks: moto in server mode on 127.0.0.1 (a child
process, started once per test run), or the store named by FORGE_TEST_S3_ENDPOINT (MinIO, ...).

    FORGE_TEST_S3_ENDPOINT=http://127.0.0.1:9000 FORGE_TEST_S3_ACCESS_KEY_ID=minioadmin \\
    FORGE_TEST_S3_SECRET_ACCESS_KEY=minioadmin [FORGE_TEST_S3_BUCKET=forge-test] pytest ...

Each user takes its own prefix in the bucket (`url(prefix)`), so tests never see each other's blobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from aiobotocore.session import get_session
from forge_common.config import S3Settings

from .ports import free_port
from .processes import stop_process

DEFAULT_BUCKET = "forge-test"


@dataclass(frozen=True, slots=True)
class S3Server:
    settings: S3Settings
    bucket: str

    def url(self, prefix: str | None = None) -> str:
        """A STORAGE_URL of a fresh prefix (or `prefix`) in the bucket."""
        return f"s3://{self.bucket}/{prefix or uuid.uuid4().hex}"


def _wait_for(endpoint: str, process: subprocess.Popen[bytes], within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto_server exited with status {process.returncode}")
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()  # noqa: S310 - our own 127.0.0.1
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"moto_server did not answer at {endpoint} within {within:g} s")


async def _create_bucket(server: S3Server) -> None:
    s = server.settings
    session = get_session()
    async with session.create_client(
        "s3",
        endpoint_url=s.endpoint_url,
        region_name=s.region,
        aws_access_key_id=s.access_key_id,
        aws_secret_access_key=s.secret_access_key,
    ) as client:
        with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
            await client.create_bucket(Bucket=server.bucket)


def create_bucket(server: S3Server) -> None:
    """Create the bucket (an existing one is fine), from synchronous fixture code."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _create_bucket(server)).result()


@contextlib.contextmanager
def running_s3(env: Mapping[str, str] | None = None) -> Iterator[S3Server]:
    """The configured store, or a moto server for the duration of the block."""
    env = os.environ if env is None else env
    endpoint = env.get("FORGE_TEST_S3_ENDPOINT")
    if endpoint:
        server = S3Server(
            S3Settings(
                endpoint_url=endpoint,
                region=env.get("FORGE_TEST_S3_REGION", "us-east-1"),
                access_key_id=env.get("FORGE_TEST_S3_ACCESS_KEY_ID"),
                secret_access_key=env.get("FORGE_TEST_S3_SECRET_ACCESS_KEY"),
            ),
            env.get("FORGE_TEST_S3_BUCKET", DEFAULT_BUCKET),
        )
        create_bucket(server)
        yield server
        return
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(endpoint, process)
        server = S3Server(
            S3Settings(
                endpoint_url=endpoint,
                region="us-east-1",
                access_key_id="testing",
                secret_access_key="testing",  # noqa: S106 - moto accepts any key
            ),
            DEFAULT_BUCKET,
        )
        create_bucket(server)
        yield server
    finally:
        stop_process(process)
