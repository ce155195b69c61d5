"""Overview benchmark (issue 5): GET /api/v1/orgs/big/overview of an organization with 100 pins,
10,000 members (5,000 public) and 1,000 repositories, measured with wrk on 127.0.0.1.

    .venv/bin/python bench/orgs/bench.py [--duration 10s] [--connections 1,4] [--budget-ms 20]

PostgreSQL is a throwaway cluster in a temporary folder; the organization is loaded with one SQL
script (services/orgs/tests/big_org.sql, shared with the query-count test). The service runs as
one `forge serve --service orgs` process (it scales by replicas). For each number of concurrent
connections and each viewer (anonymous, member, owner) it prints requests/s, p50 and p99 and the
exact wrk command. The budget applies to the first connection count (default 1: the latency of
one overview; with more connections than the one process has, p99 also measures queueing);
exits 1 when a p99 there exceeds it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import asyncpg
from forge_common.embedded_pg import EmbeddedPostgres
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_common.testing.processes import cpu_seconds, start_forge_service, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
BIG_ORG_SQL = ROOT / "services/orgs/tests/big_org.sql"
BIN = Path(sys.executable).parent
VIEWERS = {"anonymous": None, "member": "big-member-token", "owner": "big-owner-token"}


async def prepare(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn, all_migrations(installed_services()))
        await conn.execute(BIG_ORG_SQL.read_text())
    finally:
        await conn.close()


def fetch(url: str, token: str | None) -> dict[str, object]:
    headers = {"Authorization": f"token {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
        body: dict[str, object] = json.loads(response.read())
        return body


def postgres_pids(data_dir: Path) -> list[int]:
    """The postmaster and its children (the backends serving the service)."""
    found = list((data_dir).rglob("postmaster.pid"))
    if not found:
        return []
    main_pid = int(found[0].read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == main_pid:
                children.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return [main_pid, *children]


def _ms(out: str, label: str) -> float:
    found = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    assert found, out
    return float(found[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[found[2]]


def wrk(
    url: str, token: str | None, duration: str, connections: int, service_pid: int, pg_dir: Path
) -> tuple[dict[str, float], str]:
    """One bounded wrk run: req/s, p50, p99, and CPU time per request of the service and of
    PostgreSQL (steadier than latency on a shared machine)."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration}", "--latency"]
    if token:
        command += ["-H", f"Authorization: token {token}"]
    command.append(url)
    db_pids = postgres_pids(pg_dir)  # after the warm-up, the pool's backends all exist
    before = cpu_seconds([service_pid]), cpu_seconds(db_pids)
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300).stdout
    used = cpu_seconds([service_pid]) - before[0], cpu_seconds(db_pids) - before[1]
    if "Non-2xx" in out or "Socket errors" in out:
        print(out, file=sys.stderr)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    count = max(int(re.search(r"(\d+) requests in", out)[1]), 1)  # type: ignore[index]
    row = {
        "rps": rps,
        "p50_ms": _ms(out, "50%"),
        "p99_ms": _ms(out, "99%"),
        "service_cpu_ms": used[0] / count * 1000,
        "db_cpu_ms": used[1] / count * 1000,
    }
    return row, " ".join(command)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--warmup", default="2s")
    parser.add_argument("--connections", default="1,4", help="comma-separated wrk -c values")
    parser.add_argument("--budget-ms", type=float, default=20.0)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("bench: wrk is missing (make bench-orgs installs it)")
    folder = Path(tempfile.mkdtemp(prefix="forge-bench-orgs-"))
    pg = EmbeddedPostgres(folder / "pg")
    service: subprocess.Popen[bytes] | None = None
    results: dict[str, dict[str, float]] = {}
    counts = [int(c) for c in args.connections.split(",")]
    try:
        db_url = pg.start()
        print("bench: loading 10,000 members, 1,000 repositories, 100 pins ...", flush=True)
        asyncio.run(prepare(db_url))
        service, base = start_forge_service("orgs", db_url, folder / "storage")
        asyncio.run(wait_until_ready(base + "readyz", within=20))
        url = base + "api/v1/orgs/big/overview"
        for token in VIEWERS.values():
            body = fetch(url, token)
            assert body["total_members"] == 5000, body["total_members"]
            wrk(url, token, args.warmup, max(counts), service.pid, folder / "pg")
        for connections in counts:
            for viewer, token in VIEWERS.items():
                row, command = wrk(
                    url, token, args.duration, connections, service.pid, folder / "pg"
                )
                results[f"c{connections}/{viewer}"] = row
                print(
                    f"c={connections} viewer={viewer:<9} {row['rps']:>6.0f} req/s  "
                    f"p50 {row['p50_ms']:6.2f} ms  p99 {row['p99_ms']:6.2f} ms  "
                    f"cpu/req service {row['service_cpu_ms']:.2f} ms + db {row['db_cpu_ms']:.2f} ms"
                    f"   ({command})",
                    flush=True,
                )
    finally:
        if service is not None and service.poll() is None:
            service.terminate()
            try:
                service.wait(10)
            except subprocess.TimeoutExpired:
                service.kill()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    worst = max(r["p99_ms"] for k, r in results.items() if k.startswith(f"c{counts[0]}/"))
    print(
        f"bench: worst p99 at {counts[0]} connection(s) {worst:.2f} ms "
        f"(budget {args.budget_ms:.0f} ms); load average {os.getloadavg()[0]:.2f}"
    )
    print(json.dumps(results))
    return 0 if worst <= args.budget_ms else 1


if __name__ == "__main__":
    sys.exit(main())
