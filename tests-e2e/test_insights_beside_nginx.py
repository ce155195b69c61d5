"""docs/insights.md "In Kubernetes": beside each nginx, `forge insights count-proxy-log` (the
sidecar of deploy/k8s/base/nginx.yaml) counts the checks that nginx answered from its micro-cache,
from the log nginx writes, each line once: two nginx with a reader each (two files, two
positions), a reader killed and started again, and a reader's last round when stopped after its
nginx. The releases service behind them reads no log (as in Kubernetes): it counts only what
reaches it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from forge_testing.loopback import answers, request
from forge_testing.plugin import query, run_sync
from forge_testing.ports import free_port
from forge_testing.processes import (
    forge_env,
    forge_load,
    start_forge_service,
    stop_process,
    wait_until_ready,
)
from forge_testing.waiting import until

# Beyond the insights-behind-nginx suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

WORLD = {
    "users": [{"name": "owner"}],
    "repos": [
        {
            "owner": "owner",
            "name": "app",
            "releases": [
                {
                    "tag": f"v{version}",
                    "created_at": f"2026-01-0{day}T00:00:00Z",
                    "assets": [{"name": f"App-{version}-arm64.zip", "size": 100}],
                }
                for day, version in ((1, "1.0.0"), (2, "1.1.0"))
            ],
        }
    ],
}
CHECK = "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"
UP_TO_DATE = "/api/v2/repos/owner/app/releases/update?version=1.1.0&platform=darwin&arch=arm64"
MAC = "/owner/app/darwin-arm64/1.0.0"  # update.electronjs.org's Squirrel.Mac shape
QUICK = "0.2"  # INSIGHTS_FLUSH_SECONDS of the service and the readers: the test waits less
WITHIN = 30.0


def by(database_url: str, dim: str) -> dict[str, int]:
    assert dim in ("running", "offered", "feed")
    sql = (
        f"SELECT {dim} AS value, sum(n)::bigint AS n FROM releases.insights_hourly"
        " WHERE kind = 'check' GROUP BY 1"
    )
    return {row["value"]: row["n"] for row in query(database_url, sql)}


def positions(database_url: str) -> dict[str, int]:
    rows = query(database_url, "SELECT * FROM releases.insights_log_positions")
    return {row["path"]: row["position"] for row in rows}


@contextlib.contextmanager
def reader(database_url: str, log: Path, output: Path, interval: str = QUICK) -> Iterator[Any]:
    """`forge insights count-proxy-log` for `log`, as the sidecar runs it."""
    port = free_port()
    env = forge_env(
        database_url,
        "http://127.0.0.1/",
        output.parent / "storage",
        {"INSIGHTS_PROXY_LOG": str(log), "INSIGHTS_FLUSH_SECONDS": interval, "LOG_LEVEL": "INFO"},
    )
    forge = Path(sys.executable).parent / "forge"
    argv = [str(forge), "insights", "count-proxy-log", "--host", "127.0.0.1", "--port", str(port)]
    with output.open("ab") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)

    def healthy() -> bool:
        assert process.poll() is None, output.read_text()
        return answers(port, "/healthz")

    try:
        until(healthy, WITHIN, lambda: f"the reader of {log}: /healthz\n{output.read_text()}")
        yield process
    finally:
        stop_process(process)


def space_taken(logs: list[Path], outputs: list[Path]) -> str:
    """What a failed wait for freed space shows: each log's size and blocks, and what each
    reader printed."""
    taken = [
        f"{log.name}: {log.stat().st_size} bytes in {log.stat().st_blocks} blocks" for log in logs
    ]
    said = [f"{out.name}:\n{out.read_text(errors='replace')[-3000:]}" for out in outputs]
    return "\n".join(taken + said)


def send(port: int, sent: dict[str, int], paths: dict[str, int]) -> int:
    """GET each path its number of times through nginx at `port`; adds to `sent` (by the version
    the client runs); returns how many nginx answered from its cache."""
    hits = 0
    for path, n in paths.items():
        for _ in range(n):
            reply = request(port, "GET", path)
            assert reply.status in (200, 204), reply.body
            hits += reply.headers.get("X-Cache-Status") == "HIT"
        version = "1.1.0" if path == UP_TO_DATE else "1.0.0"
        sent[version] = sent.get(version, 0) + n
    return hits


def counted_exactly(
    database_url: str, sent: dict[str, int], logs: list[Path]
) -> Callable[[], bool]:
    """Every check counted and every log read to its end; never more than sent meanwhile."""
    names = [f"{socket.gethostname()}:{log}" for log in logs]

    def check() -> bool:
        running = by(database_url, "running")
        assert all(running.get(v, 0) <= n for v, n in sent.items()), (running, sent)
        read = positions(database_url)
        return running == sent and all(
            read.get(name) == log.stat().st_size for name, log in zip(names, logs, strict=True)
        )

    return check


def test_readers_beside_two_nginx_count_each_cached_answer_once(
    database_url: str, tmp_path: Path, nginx_in_front: Any
) -> None:
    storage = tmp_path / "storage"
    forge_load(database_url, storage, WORLD, tmp_path)
    with contextlib.ExitStack() as running:
        service_log = running.enter_context((tmp_path / "releases.log").open("wb"))
        releases, url = start_forge_service(
            "releases", database_url, storage, {"INSIGHTS_FLUSH_SECONDS": QUICK}, service_log
        )
        running.callback(stop_process, releases)
        run_sync(wait_until_ready(f"{url}readyz", exit_code=releases.poll))
        upstreams = {"releases": urlsplit(url).port, "orgs": free_port(), "gateway": free_port()}
        ports, logs, nginx = {}, {}, {}
        for name in ("a", "b"):
            ports[name], logs[name] = free_port(), tmp_path / f"hits-{name}.log"
            (tmp_path / name).mkdir()
            nginx[name] = running.enter_context(
                nginx_in_front(ports[name], upstreams, tmp_path / name, logs[name])
            )
        readers = {
            name: running.enter_context(reader(database_url, logs[name], tmp_path / f"{name}.out"))
            for name in ("a", "b")
        }

        sent: dict[str, int] = {}
        hits = send(ports["a"], sent, {CHECK: 120})
        hits += send(ports["b"], sent, {CHECK: 40, MAC: 30, UP_TO_DATE: 20})
        assert hits > 105, hits  # most never reached the service: only the readers count them
        both = [logs["a"], logs["b"]]
        until(
            counted_exactly(database_url, sent, both),
            WITHIN,
            lambda: str(by(database_url, "running")),
        )
        assert by(database_url, "offered") == {"1.1.0": 190, "": 20}  # found by the reader
        assert by(database_url, "feed") == {"update": 180, "squirrel-mac": 30}
        # what was counted takes no space: a hole, the size kept (each reader frees its lines
        # just after storing their position, so a moment after the counts are seen)
        until(
            lambda: all(log.stat().st_blocks * 512 <= 4096 for log in both),
            WITHIN,
            lambda: space_taken(both, [tmp_path / f"{name}.out" for name in ("a", "b")]),
        )
        assert all(log.stat().st_size > 4096 for log in both)

        # a reader killed without stopping, and started again: its lines counted once
        readers["a"].kill()
        readers["a"].wait()
        send(ports["a"], sent, {CHECK: 15})
        with reader(database_url, logs["a"], tmp_path / "a2.out"):
            until(
                counted_exactly(database_url, sent, both),
                WITHIN,
                lambda: str(by(database_url, "running")),
            )

        # stopped after its nginx (a native sidecar's order), a reader's last round counts what
        # nginx wrote as it stopped: this one reads only then (its interval is an hour)
        stop_process(readers["b"])
        with reader(database_url, logs["b"], tmp_path / "b2.out", interval="3600"):
            send(ports["b"], sent, {CHECK: 25})
            nginx["b"].stop()  # nginx writes its buffered lines as it exits
        until(
            counted_exactly(database_url, sent, both),
            WITHIN,
            lambda: str(by(database_url, "running")),
        )
        assert os.path.getsize(logs["b"]) > 0
