"""Fixtures: a sample plugin served on 127.0.0.1:0 and a real grpc.aio client for it.

Helpers live here, not in a module, because the suite runs with
--import-mode=importlib (test files cannot import each other).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from forge_plugin_sdk import Event, HTTPError, Plugin, PluginError, Request, Response
from plugin.v1 import plugin_pb2_grpc

#: Bound on every RPC and every wait in this suite.
TIMEOUT = 10.0
REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Sample:
    """A plugin with known behaviour, and what its handlers saw."""

    plugin: Plugin
    events: list[Event] = field(default_factory=list)
    configs: list[Mapping[str, str]] = field(default_factory=list)
    shutdowns: list[str] = field(default_factory=list)


def build_sample() -> Sample:
    """The plugin the RPC tests talk to."""
    plugin = Plugin(
        "sample", "1.2.3", "A sample plugin", permissions=["repo:read"], license_tier="community"
    )
    sample = Sample(plugin)

    @plugin.on_initialize
    async def configure(config: Mapping[str, str]) -> None:
        if config.get("mode") == "refuse":
            raise PluginError("mode 'refuse' is not supported")
        if config.get("mode") == "crash":
            raise RuntimeError("secret internals")
        sample.configs.append(config)

    @plugin.on_shutdown
    async def bye(reason: str) -> None:
        sample.shutdowns.append(reason)

    @plugin.on_event("release.published", "org.pin.created")
    async def record(event: Event) -> None:
        sample.events.append(event)

    @plugin.on_event("release.deleted")
    async def crash(event: Event) -> None:
        raise RuntimeError("secret internals: password=hunter2")

    @plugin.on_event("release.updated")
    async def refuse(event: Event) -> None:
        raise PluginError("storage is full, retry later")

    @plugin.route("GET", "/echo", "Echoes the request")
    async def echo(request: Request) -> dict[str, object]:
        return {
            "method": request.method,
            "path": request.path,
            "query": dict(request.query),
            "body": request.text(),
            "user_id": request.caller.user_id,
            "login": request.caller.login,
            "admin": request.caller.admin,
            "anonymous": request.caller.anonymous,
            "request_id": request.request_id,
            "content_type": request.headers.get("content-type"),
        }

    @plugin.route("POST", "/echo")
    async def echo_post(request: Request) -> Response:
        return Response(201, {"Content-Type": "application/json", "X-Seen": "1"}, request.body)

    @plugin.route("GET", "/bytes")
    async def raw(request: Request) -> bytes:
        return b"\x00\x01"

    @plugin.route("GET", "/boom")
    async def boom(request: Request) -> str:
        raise RuntimeError("secret internals")

    @plugin.route("GET", "/teapot")
    async def teapot(request: Request) -> str:
        raise HTTPError(418, "short and stout")

    return sample


@pytest.fixture
async def sample() -> AsyncIterator[Sample]:
    """The sample plugin, serving on a free port for the duration of one test."""
    built = build_sample()
    await asyncio.wait_for(built.plugin.start("127.0.0.1:0"), TIMEOUT)
    try:
        yield built
    finally:
        await asyncio.wait_for(built.plugin.stop(grace=0), TIMEOUT)


@pytest.fixture
async def channel(sample: Sample) -> AsyncIterator[grpc.aio.Channel]:
    """A grpc.aio channel to the sample plugin."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{sample.plugin.port}") as chan:
        yield chan


@pytest.fixture
def stub(channel: grpc.aio.Channel) -> plugin_pb2_grpc.PluginServiceAsyncStub:
    """The plugin.v1 stub on that channel."""
    return plugin_pb2_grpc.PluginServiceStub(channel)


@dataclass
class Child:
    """A plugin process started by a test, with the port it announced."""

    process: asyncio.subprocess.Process
    port: int


async def start_child(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Child:
    """Start ``argv`` and wait (bounded) for its ``listening on PORT`` line."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=REPO_ROOT,
    )
    assert process.stdout is not None
    try:
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), TIMEOUT)
            if not line:
                raise AssertionError(f"{argv[0]} exited ({process.returncode}) before listening")
            text = line.decode().strip()
            if text.startswith("listening on "):
                return Child(process, int(text.removeprefix("listening on ")))
    except BaseException:
        await stop_child(process)
        raise


async def stop_child(process: asyncio.subprocess.Process) -> int:
    """SIGTERM the process, kill it if it lingers; return its exit code."""
    if process.returncode is None:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode


@pytest.fixture
async def recorder_child() -> AsyncIterator[Child]:
    """The event-recorder example plugin, run as ``python -m event_recorder``."""
    # PYTHONPATH finds event_recorder even where it is not pip-installed.
    parts = [str(REPO_ROOT / "plugins" / "event-recorder"), os.environ.get("PYTHONPATH", "")]
    env = {"PYTHONPATH": os.pathsep.join(p for p in parts if p)}
    child = await start_child(
        [sys.executable, "-m", "event_recorder", "--address", "127.0.0.1:0"], env
    )
    try:
        yield child
    finally:
        await stop_child(child.process)


@pytest.fixture
async def node_child() -> AsyncIterator[Child]:
    """The node-hello example plugin, run with ``node``."""
    node = shutil.which("node")
    folder = REPO_ROOT / "plugins" / "node-hello"
    if node is None:
        pytest.skip("node is not installed")
    if not (folder / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("plugins/node-hello/node_modules is missing: run `make node-deps`")
    child = await start_child([node, str(folder / "index.js"), "127.0.0.1:0"])
    try:
        yield child
    finally:
        await stop_child(child.process)
