"""End-to-end fixtures: real processes on 127.0.0.1 behind real nginx.

One stack per test module (starting it is the slow part): a database cloned from the session's
migrated template (forge_testing), a world loaded with `forge load`, the example plugin
event-recorder, `forge serve --service releases|orgs|gateway` as three processes, and nginx run as a
plain process from deploy/nginx (the same template compose and Kubernetes use). Every process is
stopped in the fixture's finalizer, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from forge_common.db import connect
from forge_common.embedded_pg import EmbeddedPostgres
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_testing.loopback import Response, answers, request
from forge_testing.nginx import find_nginx, load_renderer
from forge_testing.plugin import TEMPLATE, run_sync, with_database
from forge_testing.ports import free_port
from forge_testing.processes import forge_env, load_world
from forge_testing.waiting import until

ROOT = Path(__file__).resolve().parent.parent
# Seconds one process may take to become ready: a bound, never waited once it is ready. Four test
# workers starting stacks on a busy 2-core machine have needed more than 60.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 5.0
EVENTS_SECRET = "e2e-events-secret"


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    access_log: Path | None = None  # nginx's, while it runs (tests that read what it logged)

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(STOP_TIMEOUT)


@dataclass
class Stack:
    """The running system: `request()` goes through nginx; `direct()` to one service."""

    base_url: str
    nginx_port: int
    ports: dict[str, int]
    processes: list[Process] = field(default_factory=list)

    def request(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        port: int | None = None,
    ) -> Response:
        return request(port or self.nginx_port, method, path, headers, body)

    def get(self, path: str, headers: Mapping[str, str] | None = None) -> Response:
        return self.request("GET", path, headers)

    def wait_until_cached(self, path: str, within: float = 3.0) -> None:
        """Until nginx answers `path` from its micro-cache (a whole second may end between two
        requests); each answer an update check, list or feed may give (200, 204, 404)."""
        deadline = time.monotonic() + within
        while True:
            reply = self.get(path)
            assert reply.status in (200, 204, 404), reply.body
            if reply.headers.get("X-Cache-Status") == "HIT":
                return
            assert time.monotonic() < deadline, f"{path} is not answered from the cache"

    def direct(self, service: str, method: str, path: str, **kw: Any) -> Response:
        return self.request(method, path, port=self.ports[service], **kw)

    def publish(
        self,
        repo: str,
        tag: str,
        files: Mapping[str, bytes],
        credential: Mapping[str, str],
        **flags: Any,
    ) -> None:
        """Publishes `tag` of `repo` (`owner/name`) through the API as a publisher does: a draft,
        its files uploaded, then published with `flags` (e.g. `rollout`)."""
        api = f"/api/v2/repos/{repo}/releases"
        headers = {**credential, "Content-Type": "application/json"}
        draft = json.dumps({"tag_name": tag, "draft": True}).encode()
        created = self.request("POST", api, headers, draft)
        assert created.status == 201, created.body
        release_id = created.json()["id"]
        for name, data in files.items():
            uploaded = self.request(
                "POST",
                f"{api}/{release_id}/assets?name={name}",
                {**credential, "Content-Type": "application/octet-stream"},
                data,
            )
            assert uploaded.status == 201, uploaded.body
        body = json.dumps({"draft": False, **flags}).encode()
        published = self.request("PATCH", f"{api}/{release_id}", headers, body)
        assert published.status == 200, published.body


def _start(name: str, argv: list[str], env: Mapping[str, str], logs: Path) -> Process:
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        popen = subprocess.Popen(
            argv, env=dict(env), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
    return Process(name, popen, log)


def _wait_until(process: Process, ready: Callable[[], bool], what: str) -> None:
    def check() -> bool:
        if process.popen.poll() is not None:
            pytest.fail(f"{process.name} exited ({process.popen.returncode}):\n{process.tail()}")
        return ready()

    until(check, START_TIMEOUT, lambda: f"{process.name}: {what}\n{process.tail()}")


def _http_ok(port: int, path: str, statuses: tuple[int, ...] = (200,)) -> Callable[[], bool]:
    return lambda: answers(port, path, statuses)


def _log_says(process: Process, text: str) -> Callable[[], bool]:
    return lambda: text in process.tail(200)


async def _create_database(server_url: str, name: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    finally:
        await conn.close()


async def _drop_database(server_url: str, name: str) -> None:
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def e2e_database(
    pg_server_url: str, template_url: str, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A migrated database for one module's stack (the per-test `database_url` is too short-lived
    for processes shared by the module's tests)."""
    name = f"forge_e2e_{os.getpid()}_{request.module.__name__.rsplit('.', 1)[-1]}"
    run_sync(_create_database(pg_server_url, name))
    try:
        yield with_database(pg_server_url, name)
    finally:
        run_sync(_drop_database(pg_server_url, name))


@pytest.fixture(scope="module")
def stack(
    e2e_database: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Stack]:
    """The running system for a test module, with the module's `WORLD` loaded and its `STACK_ENV`
    (if any) added to the services' environment."""
    world = request.module.WORLD
    extra = getattr(request.module, "STACK_ENV", None)
    replicas = getattr(request.module, "STACK_REPLICAS", 1)
    workdir = tmp_path_factory.mktemp("e2e")
    yield from start_stack(e2e_database, world, workdir, extra, releases_replicas=replicas)


@contextlib.contextmanager
def running_nginx(
    port: int,
    upstreams: Mapping[str, int],
    logs: Path,
    insights_log: Path | None = None,
    more_releases: Sequence[int] = (),
) -> Iterator[Process]:
    """nginx as a plain process from deploy/nginx, in front of `upstreams` (name -> port);
    `insights_log`: where it writes the checks it answers from its micro-cache; `more_releases`:
    the ports of more releases replicas in its upstream (each a `server` line, as in Kubernetes a
    Service's endpoints are)."""
    nginx = find_nginx()
    if nginx is None:
        pytest.skip("nginx is not installed (make deploy-tools installs it as root)")
    # nginx runs its workers as `nobody` when started as root: the prefix must be traversable.
    prefix = Path(tempfile.mkdtemp(prefix="forge-e2e-nginx-"))
    prefix.chmod(0o755)
    load_renderer().write_prefix(
        prefix,
        {
            "NGINX_LISTEN": f"127.0.0.1:{port}",
            # the template's `server ${RELEASES_UPSTREAM};` takes one address: more replicas
            # follow it as `server` lines of their own
            "RELEASES_UPSTREAM": "; server ".join(
                f"127.0.0.1:{p}" for p in (upstreams["releases"], *more_releases)
            ),
            "ORGS_UPSTREAM": f"127.0.0.1:{upstreams['orgs']}",
            "GATEWAY_UPSTREAM": f"127.0.0.1:{upstreams['gateway']}",
            **({"INSIGHTS_LOG": str(insights_log)} if insights_log else {}),
        },
    )
    argv = [nginx, "-p", f"{prefix}/", "-e", "logs/error.log", "-c", "nginx.conf"]
    process = _start("nginx", [*argv, "-g", "daemon off;"], {}, logs)
    process.access_log = prefix / "logs" / "access.log"
    try:
        # a path nginx answers itself: `/` goes to the releases service (down in lone_proxy)
        _wait_until(process, _http_ok(port, "/internal/", (404,)), "answering")
        yield process
    finally:
        process.stop()
        with contextlib.suppress(OSError):
            shutil.copy(prefix / "logs" / "error.log", logs / "nginx-error.log")
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture(scope="session")
def nginx_in_front() -> Callable[..., contextlib.AbstractContextManager[Process]]:
    """`running_nginx` for a test that starts its own processes behind it."""
    return running_nginx


@pytest.fixture(scope="module")
def lone_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """nginx alone: its upstream ports are free ones nothing listens on."""
    port = free_port()
    dead = {name: free_port() for name in ("releases", "orgs", "gateway")}
    with running_nginx(port, dead, tmp_path_factory.mktemp("lone-proxy")) as process:
        yield Stack(f"http://127.0.0.1:{port}/", port, dead, [process])


def start_stack(
    database_url: str,
    world: Mapping[str, Any],
    workdir: Path,
    extra_env: Mapping[str, str] | None = None,
    releases_replicas: int = 1,
) -> Iterator[Stack]:
    """Load `world`, start the plugin, the three services and nginx; yield; stop them all.
    `extra_env` adds to or overrides the services' environment (e.g. BODY_READ_TIMEOUT);
    `releases_replicas`: releases processes behind nginx (the second is `releases-2` in
    `ports`)."""
    if find_nginx() is None:
        pytest.skip("nginx is not installed (make deploy-tools installs it as root)")
    logs = workdir / "logs"
    logs.mkdir(parents=True)
    nginx_port = free_port()
    more = [f"releases-{n}" for n in range(2, releases_replicas + 1)]
    ports = {name: free_port() for name in ("releases", "orgs", "gateway", "plugin", *more)}
    base_url = f"http://127.0.0.1:{nginx_port}/"
    stack = Stack(base_url, nginx_port, ports)
    forge = [sys.executable, "-m", "forge_common.cli"]
    plugins_file = workdir / "plugins.json"
    plugin_entry = {"name": "event-recorder", "address": f"127.0.0.1:{ports['plugin']}"}
    plugins_file.write_text(json.dumps({"plugins": [{**plugin_entry, "enabled": True}]}))
    services = {
        "GATEWAY_URL": f"http://127.0.0.1:{ports['gateway']}/",
        "EVENTS_SECRET": EVENTS_SECRET,
        "PLUGINS_FILE": str(plugins_file),
        "AUTO_MIGRATE": "false",
        "LOG_FORMAT": "text",
        "PYTHONUNBUFFERED": "1",
        # the checks nginx answers from its micro-cache, counted by the releases service
        "INSIGHTS_PROXY_LOG": str(workdir / "nginx-insights-hits.log"),
    }
    env = forge_env(database_url, base_url, workdir / "storage", {**services, **(extra_env or {})})
    load_world(world, workdir, env)

    try:
        plugin = _start(
            "event-recorder",
            [sys.executable, "-m", "event_recorder", "--address", plugin_entry["address"]],
            env,
            logs,
        )
        stack.processes.append(plugin)
        _wait_until(plugin, _log_says(plugin, "listening on"), "listening")
        for name in ("releases", "orgs", "gateway", *more):
            service = name.partition("-")[0]
            argv = [*forge, "serve", "--service", service, "--host", "127.0.0.1"]
            stack.processes.append(_start(name, [*argv, "--port", str(ports[name])], env, logs))
        for process in stack.processes[1:]:
            _wait_until(process, _http_ok(ports[process.name], "/readyz"), "/readyz")
        insights_log = Path(services["INSIGHTS_PROXY_LOG"])
        more_ports = [ports[name] for name in more]
        with running_nginx(nginx_port, ports, logs, insights_log, more_ports) as proxy:
            stack.processes.append(proxy)
            yield stack
    finally:
        for process in reversed(stack.processes):
            process.stop()


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[EmbeddedPostgres]:
    """A migrated PostgreSQL cluster of the module's own, which its tests may stop and restart
    without breaking the session's."""
    folder = Path(tempfile.mkdtemp(prefix="forge-e2e-cluster-"))
    server = EmbeddedPostgres(folder, durable=False, port=free_port())
    url = server.start()

    async def migrated() -> None:
        conn = await connect(url)
        try:
            await migrate(conn, all_migrations(installed_services()))
        finally:
            await conn.close()

    run_sync(migrated())
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def own_cluster_stack(
    own_cluster: EmbeddedPostgres,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[Stack]:
    """The module's stack on `own_cluster`: for tests that stop or restart PostgreSQL."""
    world = request.module.WORLD
    yield from start_stack(own_cluster.url, world, tmp_path_factory.mktemp("e2e-own-cluster"))
