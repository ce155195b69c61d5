"""Helpers for tests and benchmarks that run `forge` as a real process on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import aiohttp

from .ports import free_port


def forge_env(
    database_url: str, app_url: str, storage: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a `forge` process a test starts: this one's, plus what a service needs
    to start (fresh secrets) and quiet logs; `extra` adds to it or overrides it."""
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "APP_URL": app_url,
        "STORAGE_PATH": str(storage),
        "LOG_LEVEL": "WARNING",
        "URL_SIGNING_SECRET": secrets.token_urlsafe(32),  # releases refuses to start without
        # a service started alone refuses to start without one (docs/cli-and-world.md)
        "EVENTS_SECRET": secrets.token_urlsafe(16),
        **(extra or {}),
    }


def load_world(world: Mapping[str, Any], folder: Path, env: Mapping[str, str]) -> None:
    """`forge load` of `world` (written to `folder`/world.json) as a process with `env` added to
    this one's (DATABASE_URL, and STORAGE_PATH for assets with content); fails when it does."""
    path = folder / "world.json"
    path.write_text(json.dumps(world))
    loaded = subprocess.run(
        [sys.executable, "-m", "forge_common.cli", "load", str(path)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if loaded.returncode != 0:
        raise AssertionError(f"forge load failed:\n{loaded.stdout}\n{loaded.stderr}")


def forge_load(database_url: str, storage: Path, world: Mapping[str, Any], folder: Path) -> None:
    """`load_world` into this database, assets into the folder storage `storage`."""
    load_world(world, folder, {"DATABASE_URL": database_url, "STORAGE_PATH": str(storage)})


def start_forge_service(
    service: str,
    database_url: str,
    storage: Path,
    extra_env: Mapping[str, str] | None = None,
    output: IO[bytes] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """`forge serve --service SERVICE` on a free 127.0.0.1 port; returns the process and its base
    URL (which is also its APP_URL). Wait for it with `wait_until_ready(url + "readyz")`. Its
    stdout and stderr go to `output` when given (a test reading its log)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = forge_env(database_url, url, storage, extra_env)
    forge = Path(sys.executable).parent / "forge"
    command = [
        str(forge),
        "serve",
        "--service",
        service,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    return subprocess.Popen(command, env=env, stdout=output, stderr=output), url


class NotReady(RuntimeError):
    """The process exited, or did not answer 200 in time."""


async def wait_until_ready(
    url: str, *, exit_code: Callable[[], int | None] | None = None, within: float = 120.0
) -> None:
    """Poll `url` (e.g. `.../readyz`) until it answers 200; fail early when `exit_code()` says the
    process is gone."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
        while loop.time() < deadline:
            code = exit_code() if exit_code is not None else None
            if code is not None:
                raise NotReady(f"the process exited with status {code} before {url} was ready")
            try:
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(0.05)
    raise NotReady(f"{url} did not become ready within {within:g} s")


def cpu_seconds(pids: Iterable[int]) -> float:
    """User + system CPU time the processes used so far (Linux /proc); gone processes count 0."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def stop_process(process: subprocess.Popen[bytes], within: float = 10.0) -> None:
    """SIGTERM, then SIGKILL when it has not exited `within` seconds later."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(within)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(within)
