"""docs/architecture.md "Dependency outages", end to end: the real services behind nginx, their
PostgreSQL restarted under a bounded load. No 500 at any moment, 503 with Retry-After during the
outage, every request 2xx again within 5 s after PostgreSQL is back, and the services' logs hold
no traceback and only a few warnings. The cluster is this module's own: the session's is never
restarted."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir
from forge_testing.loopback import request

if TYPE_CHECKING:
    from conftest import Stack

# Beyond the faults suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.full,
    pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here"),
]

WORLD = {
    "users": [{"name": "alice", "tokens": ["alice-outage-token"]}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [{"owner": "acme", "name": "app", "releases": [{"tag": "v1.0.0"}]}],
}
CLIENTS = 8
BACK_WITHIN = 5.0


def _load(stack: Stack, stop: threading.Event, results: list[tuple[float, int, Any]]) -> None:
    paths = ["/api/v2/repos/acme/app/releases", "/api/v1/orgs/acme/overview"]
    headers = {"Authorization": "token alice-outage-token"}
    n = 0
    while not stop.is_set():
        n += 1
        started = time.monotonic()
        try:
            path = paths[n % 2]
            reply = request(stack.nginx_port, "GET", path, headers if n % 3 else {}, timeout=10)
            results.append((started, reply.status, reply.headers.get("Retry-After")))
        except OSError as exc:
            results.append((started, 0, repr(exc)))


def test_postgres_restarted_under_load_is_503_then_back(
    own_cluster_stack: Stack, own_cluster: EmbeddedPostgres
) -> None:
    results: list[tuple[float, int, Any]] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=_load, args=(own_cluster_stack, stop, results))
        for _ in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    try:
        time.sleep(1)
        own_cluster.stop()  # pg_ctl stop -m fast: every connection cut
        time.sleep(2)
        own_cluster.start()
        back = time.monotonic()
        time.sleep(BACK_WITHIN + 2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)

    statuses = {status for _, status, _ in results}
    assert 500 not in statuses and 0 not in statuses, sorted(statuses)
    unavailable = [r for r in results if r[1] == 503]
    assert unavailable, "the outage was not seen"
    assert all(retry_after for _, _, retry_after in unavailable)
    late = [status for started, status, _ in results if started > back + BACK_WITHIN]
    assert late and all(200 <= status < 300 for status in late), sorted(set(late))

    # no service logs an error or a traceback, from its request path or its background workers
    # (the outbox relay, the gateway's delivery worker), and the outage once each way.
    for process in own_cluster_stack.processes:
        if process.name not in ("releases", "orgs", "gateway"):
            continue
        lines = process.log.read_text(errors="replace").splitlines()
        errors = [line for line in lines if " ERROR " in line or "Traceback" in line]
        assert not errors, (process.name, errors)
        outage = [line for line in lines if "forge_common.outage" in line]
        assert 1 <= len(outage) <= 4, (process.name, outage)
        assert len([line for line in lines if " WARNING " in line]) <= 12, lines
