"""docs/insights.md "What a crash loses": `forge serve` killed with SIGKILL loses only the update
checks it counted since its last write, none written before, and counts nothing twice when
started again. A real process, a real database; the writes are waited for in the database."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from forge_testing.loopback import request
from forge_testing.plugin import query, run_sync
from forge_testing.processes import (
    forge_load,
    start_forge_service,
    stop_process,
    wait_until_ready,
)
from forge_testing.waiting import until

# Beyond the faults suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

WORLD = {
    "users": [{"name": "owner"}],
    "repos": [{"owner": "owner", "name": "app", "releases": [{"tag": "v1.0.0"}]}],
}
CHECK = "/api/v2/repos/owner/app/releases/update?version=0.9.0&platform=linux&arch=x64"
# INSIGHTS_FLUSH_SECONDS: the window a crash may lose, set explicitly (the default is 2)
FLUSH = 0.5
WITHIN = 30.0


def stored(database_url: str) -> int:
    sql = "SELECT coalesce(sum(n), 0)::bigint FROM releases.insights_hourly WHERE kind = 'check'"
    count: int = query(database_url, sql)[0][0]
    return count


def others_connected(database_url: str) -> int:
    """Sessions on the database besides this query's: a killed process's last write may still
    be running in its session, which ends once PostgreSQL has finished it and seen the socket
    closed."""
    sql = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    count: int = query(database_url, sql)[0][0]
    return count


def start(database_url: str, storage: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    with log.open("ab") as output:
        process, url = start_forge_service(
            "releases", database_url, storage, {"INSIGHTS_FLUSH_SECONDS": str(FLUSH)}, output
        )
    run_sync(wait_until_ready(f"{url}readyz", exit_code=process.poll))
    port = urlsplit(url).port
    assert port is not None
    return process, port


def check(port: int, n: int) -> int:
    for _ in range(n):
        assert request(port, "GET", CHECK).status in (200, 204)  # counted either way
    return n


def test_sigkill_loses_only_what_was_counted_since_the_last_write(
    database_url: str, tmp_path: Path
) -> None:
    storage, log = tmp_path / "storage", tmp_path / "releases.log"
    forge_load(database_url, storage, WORLD, tmp_path)
    process, port = start(database_url, storage, log)
    try:
        written = check(port, 40)
        # the writer's next round (at most FLUSH s later) stores them
        until(lambda: stored(database_url) == written, WITHIN, lambda: f"{stored(database_url)}")
        since = check(port, 25)  # counted after the last write seen: what a crash may lose
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        stop_process(process)
    until(lambda: others_connected(database_url) == 0, WITHIN, "the killed process's sessions")
    kept = stored(database_url)
    assert written <= kept <= written + since
    lost = written + since - kept
    assert lost <= since  # nothing written before the last write is lost

    # started again: it counts from there, nothing twice
    process, port = start(database_url, storage, log)
    try:
        assert stored(database_url) == kept
        check(port, 3)
        until(lambda: stored(database_url) == kept + 3, WITHIN, lambda: f"{stored(database_url)}")
        process.terminate()
        assert process.wait(WITHIN) == 0
        assert stored(database_url) == kept + 3
    finally:
        stop_process(process)
