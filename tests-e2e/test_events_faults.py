"""Events under faults (docs/events.md): releases and orgs as real processes whose relays send to
gateway A, a second gateway B on the same database, and a recording plugin (tests-e2e/events/
recording_plugin.py) that both gateways deliver to (A what it leased at ingest, B what A had no
room for). Releases are created through the public API
while (a) gateway A is stopped and started again, (b) the plugin is stopped and started again,
(c) gateway B is SIGKILLed while it has calls in flight. Afterwards every committed event reached
the plugin at least once: lost must be 0; duplicates, dead letters and the recovery time after
each fault are printed.

Short by default (~100 events); FORGE_E2E_EVENTS=N, or `tests-e2e/events/run_faults.py --events
N`, for a longer run.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from forge_testing.loopback import answers, request
from forge_testing.ports import free_port
from forge_testing.processes import forge_env, load_world
from forge_testing.waiting import until

# Beyond the faults suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "tests-e2e" / "events" / "recording_plugin.py"
SECRET = "e2e-events-faults-secret"
BOB = {"Authorization": "token bob-faults-token", "Content-Type": "application/json"}
ALICE = {"Authorization": "token alice-faults-token"}
# At least this many events (two per release created); releases are created at up to RATE a
# second from the start until the faults are over and enough were created.
EVENTS = int(os.environ.get("FORGE_E2E_EVENTS", "100"))
RATE = float(os.environ.get("FORGE_E2E_RATE", "10"))
FAULT_SECONDS = 1.5  # how long a stopped process stays down
CALL_SECONDS = 0.3  # each OnEvent takes this long in the plugin, so calls stay in flight a while
# Calls in flight to the plugin per gateway: one gateway delivers fewer events a second than the
# 2 * RATE created (17 of 20 by default), two more. Gateway A, which the relays send to, leases
# at ingest what it has room for and leaves the rest for B to claim, so both deliver
# (docs/events.md "Leased at ingest"), and together they keep up; once B is killed, A alone
# falls behind only slowly.
CAP = max(1, round(1.8 * RATE * CALL_SECONDS))
RECOVERY_LIMIT = 30.0  # seconds for the events of a fault to arrive; more fails the test

WORLD = {
    "users": [
        {"name": "alice", "admin": True, "tokens": ["alice-faults-token"]},
        {"name": "bob", "tokens": ["bob-faults-token"]},
    ],
    "repos": [{"owner": "bob", "name": "app"}],
}


@dataclass
class Proc:
    name: str
    argv: list[str]
    env: dict[str, str]
    logs: Path
    popen: subprocess.Popen[bytes] | None = None
    port: int = 0

    def start(self) -> None:
        out = (self.logs / f"{self.name}.log").open("ab")
        self.popen = subprocess.Popen(self.argv, env=self.env, stdout=out, stderr=out, cwd=ROOT)
        out.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)

    def ready(self) -> bool:
        if self.popen is not None and self.popen.poll() is not None:
            pytest.fail(
                f"{self.name} exited: {(self.logs / f'{self.name}.log').read_text()[-2000:]}"
            )
        return answers(self.port, "/readyz", timeout=10)


@dataclass
class System:
    database_url: str
    received_log: Path
    procs: dict[str, Proc] = field(default_factory=dict)

    def received(self) -> list[tuple[str, str, str]]:
        try:
            lines = self.received_log.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [tuple(line.split(" ", 2)) for line in lines if line.count(" ") == 2]  # type: ignore[misc]

    def plugin_up(self) -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.procs["plugin"].port)) == 0


@pytest.fixture(scope="module")
def system(e2e_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[System]:
    work = tmp_path_factory.mktemp("events-faults")
    logs = work / "logs"
    logs.mkdir()
    plugin_port = free_port()
    plugins_file = work / "plugins.json"
    recorder = {"name": "recorder", "address": f"127.0.0.1:{plugin_port}"}
    plugins_file.write_text(json.dumps({"plugins": [{**recorder, "max_in_flight": CAP}]}))
    ports = {name: free_port() for name in ("releases", "orgs", "gateway-a", "gateway-b")}
    quiet = {"AUTO_MIGRATE": "false", "LOG_FORMAT": "text", "PYTHONUNBUFFERED": "1"}
    services = {"EVENTS_SECRET": SECRET, "PLUGINS_FILE": str(plugins_file), **quiet}
    releases_url = f"http://127.0.0.1:{ports['releases']}/"
    env = forge_env(e2e_database, releases_url, work / "storage", services)
    forge = [sys.executable, "-m", "forge_common.cli"]
    load_world(WORLD, work, env)
    received = work / "received.log"
    system = System(e2e_database, received)
    plugin_argv = [sys.executable, str(PLUGIN), "--address", f"127.0.0.1:{plugin_port}"]
    plugin_argv += ["--log", str(received), "--delay", str(CALL_SECONDS)]
    system.procs["plugin"] = Proc("plugin", plugin_argv, env, logs, port=plugin_port)
    producer_env = {**env, "GATEWAY_URL": f"http://127.0.0.1:{ports['gateway-a']}/"}
    for name, port in ports.items():
        service = "gateway" if name.startswith("gateway") else name
        argv = [*forge, "serve", "--service", service, "--host", "127.0.0.1", "--port", str(port)]
        proc_env = env if service == "gateway" else producer_env
        system.procs[name] = Proc(name, argv, proc_env, logs, port=port)
    try:
        for proc in system.procs.values():
            proc.start()
        until(system.plugin_up, 20, "the plugin listening")
        for name in ports:
            until(system.procs[name].ready, 20, f"{name} ready")
        yield system
    finally:
        for proc in reversed(system.procs.values()):
            proc.stop()


class Emitter(threading.Thread):
    """Creates releases through the public API at up to RATE a second, until told to stop and at
    least `releases` were created; remembers the tags of the ones committed (201): each is a
    release.created and a release.published."""

    def __init__(self, port: int, releases: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.releases = releases
        self.committed: list[str] = []
        self.failed = 0
        self.stopping = threading.Event()
        self._bursts = itertools.count()

    def run(self) -> None:
        for n in itertools.count():
            if self.stopping.is_set() and len(self.committed) >= self.releases:
                return
            self.create(f"v0.{n}.0")
            time.sleep(1 / RATE)

    def create(self, tag: str) -> None:
        body = json.dumps({"tag_name": tag, "name": tag}).encode()
        try:
            path = "/api/v2/repos/bob/app/releases"
            status = request(self.port, "POST", path, BOB, body, timeout=10).status
        except OSError:
            status = 0
        if status == 201:
            self.committed.append(tag)  # list.append: one thread at a time by the GIL
        else:
            self.failed += 1

    def burst(self, releases: int) -> None:
        """Create `releases` at once, beside the steady ones: more deliveries than one gateway
        has room for whatever the machine's speed (the steady rate outruns gateway A only while
        creating a release is quick)."""
        first = next(self._bursts) * releases
        tags = [f"v1.{first + i}.0" for i in range(releases)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(self.create, tags))


def delivered_all(system: System, tags: list[str]) -> Callable[[], bool]:
    def check() -> bool:
        seen = {(t, tag) for _, t, tag in system.received()}
        return all(
            (kind, tag) in seen for tag in tags for kind in ("release.created", "release.published")
        )

    return check


async def _leased_by(url: str, pid: int) -> int:
    """How many deliveries the gateway process `pid` holds (its `lease_owner` is
    `<hostname>:<pid>:<random>`)."""
    conn = await asyncpg.connect(url)
    try:
        held: int = await conn.fetchval(
            """SELECT count(*) FROM gateway.deliveries
                WHERE status = 'pending' AND split_part(lease_owner, ':', 2) = $1""",
            str(pid),
        )
        return held
    finally:
        await conn.close()


async def _database_facts(url: str) -> dict[str, Any]:
    conn = await asyncpg.connect(url)
    try:
        return {
            "outbox": await conn.fetchval("SELECT count(*) FROM core.outbox"),
            # the events delivered to a plugin (the audit log's `audit.recorded`, which each
            # release change also emits, goes to no plugin here: it subscribes to none)
            "event_ids": {
                str(r["event_id"])
                for r in await conn.fetch("SELECT DISTINCT event_id FROM gateway.deliveries")
            },
            "dead": await conn.fetchval(
                "SELECT count(*) FROM gateway.deliveries WHERE status = 'dead'"
            ),
            "pending": await conn.fetchval(
                "SELECT count(*) FROM gateway.deliveries WHERE status = 'pending'"
            ),
            "interrupted": await conn.fetchval(
                """SELECT count(*) FROM gateway.delivery_attempts WHERE outcome = 'retry'
                      AND (error LIKE 'interrupted%' OR error LIKE 'lease%')"""
            ),
        }
    finally:
        await conn.close()


def test_every_committed_event_reaches_the_plugin_through_stops_restarts_and_a_kill(
    system: System,
) -> None:
    procs = system.procs
    emitter = Emitter(procs["releases"].port, max(EVENTS // 2, 10))
    emitter.start()
    recovery: dict[str, float] = {}
    try:
        time.sleep(0.5)

        # (a) The gateway the producers send to stops and comes back: rows wait in the outbox.
        procs["gateway-a"].stop()
        time.sleep(FAULT_SECONDS)
        procs["gateway-a"].start()
        until(procs["gateway-a"].ready, 20, "gateway A back")
        so_far = list(emitter.committed)
        recovery["gateway A restarted"] = until(
            delivered_all(system, so_far), RECOVERY_LIMIT, "events of the gateway's outage"
        )

        # (b) The plugin stops and comes back: deliveries wait without spending attempts.
        procs["plugin"].stop()
        time.sleep(FAULT_SECONDS)
        procs["plugin"].start()
        until(system.plugin_up, 20, "the plugin back")
        so_far = list(emitter.committed)
        recovery["plugin restarted"] = until(
            delivered_all(system, so_far), RECOVERY_LIMIT, "events of the plugin's outage"
        )

        # (c) Gateway B is killed while it holds deliveries: its leases end, gateway A takes
        # over. A has room for fewer than are created (CAP), so B claims the rest as they come
        # and holds some within a few of them. A burst makes sure of it on a slow machine,
        # where the steady creations alone come slower than A delivers.
        gateway_b = procs["gateway-b"].popen
        assert gateway_b is not None

        last_burst = [time.monotonic()]

        def b_holds_some() -> bool:
            if asyncio.run(_leased_by(system.database_url, gateway_b.pid)) > 0:
                return True
            if time.monotonic() - last_burst[0] > 2.0:  # give B's claim of the last one time
                emitter.burst(4 * CAP)  # twice A's calls in flight, and their publications
                last_burst[0] = time.monotonic()
            return False

        until(b_holds_some, RECOVERY_LIMIT, "gateway B holding deliveries")
        procs["gateway-b"].stop(signal.SIGKILL)
        so_far = list(emitter.committed)
        recovery["gateway B killed"] = until(
            delivered_all(system, so_far), RECOVERY_LIMIT, "events gateway B held"
        )
    finally:
        emitter.stopping.set()
        emitter.join(timeout=max(60.0, EVENTS / RATE * 2))

    tags = list(emitter.committed)
    until(delivered_all(system, tags), RECOVERY_LIMIT, "every committed event")
    facts = asyncio.run(_database_facts(system.database_url))
    received = system.received()
    calls = Counter(event_id for event_id, _, _ in received)
    expected = {(kind, tag) for tag in tags for kind in ("release.created", "release.published")}
    lost = expected - {(kind, tag) for _, kind, tag in received}
    lost_ids = facts["event_ids"] - set(calls)
    duplicates = sum(n - 1 for n in calls.values())
    print(
        f"\nevents under faults: {len(expected)} committed ({len(tags)} releases, "
        f"{emitter.failed} API calls refused), lost {len(lost) + len(lost_ids)}, "
        f"duplicates {duplicates}, dead letters {facts['dead']}, "
        f"interrupted or lost attempts recorded {facts['interrupted']}, outbox left "
        f"{facts['outbox']}"
    )
    for fault, seconds in recovery.items():
        print(f"  recovery after {fault}: {seconds:.2f} s")
    assert not lost and not lost_ids
    assert facts["dead"] == 0
    assert facts["outbox"] == 0
