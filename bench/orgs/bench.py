"""Overview benchmark: GET /api/v1/orgs/big/overview of an organization with 100 pins, 10,000
members (5,000 public) and 1,000 repositories, measured with wrk on 127.0.0.1.

    .venv/bin/python bench/orgs/bench.py [--duration 10s] [--connections 1,4] [--budget-ms 20]
                                         [--smoke]

PostgreSQL is a throwaway cluster in a temporary folder; the organization is loaded with one SQL
script (services/orgs/tests/big_org.sql, shared with the query-count test). The service runs as
one `forge serve --service orgs` process (it scales by replicas). For each number of concurrent
connections and each viewer (anonymous, member, owner) it prints requests/s, p50 and p99, the CPU
time per request of the service and of its PostgreSQL backends, and the exact wrk command. The
budget applies to the first connection count (default 1: the latency of one overview; with more
connections than the one process has, p99 also measures queueing); exits 1 when a p99 there
exceeds it. `--smoke` runs 1 s per viewer at one connection without warm-up and does not apply
the budget: it checks the benchmark works, its figures say nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    Report,
    fail,
    migrated,
    parse_args,
    require_tool,
    service,
    warm_up,
    workspace,
    wrk,
)

ROOT = Path(__file__).resolve().parents[2]
BIG_ORG_SQL = ROOT / "services/orgs/tests/big_org.sql"
VIEWERS = {"anonymous": None, "member": "big-member-token", "owner": "big-owner-token"}
FULL = {"duration": "10s", "warmup": "2s", "connections": "16,1"}
SMOKE = {"duration": "1s", "warmup": "0", "connections": "1"}


async def prepare(url: str) -> None:
    async with migrated(url) as conn:
        await conn.execute(BIG_ORG_SQL.read_text())


async def backend_pids(url: str) -> list[int]:
    """The PostgreSQL backends connected to the benchmark's database: the service's pool."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()
    return [row["pid"] for row in rows]


def fetch(url: str, token: str | None) -> dict[str, object]:
    request = urllib.request.Request(url, headers=auth(token))  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
        body: dict[str, object] = json.loads(response.read())
        return body


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"token {token}"} if token else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up run of each viewer (0: none)")
    parser.add_argument("--connections", help="comma-separated wrk -c values")
    parser.add_argument("--budget-ms", type=float, default=20.0)
    args = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    counts = [int(c) for c in args.connections.split(",")]
    report = Report("bench-orgs", args.smoke)
    results: dict[str, dict[str, float]] = {}
    with workspace("forge-bench-orgs-") as (folder, db_url):
        report.row("loading 10,000 members, 1,000 repositories, 100 pins ...")
        asyncio.run(prepare(db_url))
        with service("orgs", db_url, folder / "storage") as (process, base):
            url = base + "api/v1/orgs/big/overview"
            for token in VIEWERS.values():
                total = fetch(url, token).get("total_members")
                if total != 5000:
                    fail(f"the overview counts {total} public members, not 5,000")
                if warm_up(args.warmup):
                    wrk(url, args.warmup, threads=1, connections=max(counts), headers=auth(token))
            for connections in counts:
                for viewer, token in VIEWERS.items():
                    # after the warm-up, the pool's backends all exist
                    cpu_of = {"service": [process.pid], "db": asyncio.run(backend_pids(db_url))}
                    run = wrk(
                        url,
                        args.duration,
                        threads=1,
                        connections=connections,
                        headers=auth(token),
                        cpu_of=cpu_of,
                    )
                    row = {
                        "rps": run.rps,
                        "p50_ms": run.p50_ms,
                        "p99_ms": run.p99_ms,
                        "service_cpu_ms": run.cpu_us["service"] / 1000,
                        "db_cpu_ms": run.cpu_us["db"] / 1000,
                    }
                    results[f"c{connections}/{viewer}"] = row
                    report.row(
                        f"c={connections} viewer={viewer:<9} {row['rps']:>6.0f} req/s  "
                        f"p50 {row['p50_ms']:6.2f} ms  p99 {row['p99_ms']:6.2f} ms  "
                        f"cpu/req service {row['service_cpu_ms']:.2f} ms "
                        f"+ db {row['db_cpu_ms']:.2f} ms   ({run.command})"
                    )
    worst = max(r["p99_ms"] for k, r in results.items() if k.startswith(f"c{counts[0]}/"))
    verdict = "not applied to a smoke run" if args.smoke else f"{args.budget_ms:.0f} ms"
    report.row(f"worst p99 at {counts[0]} connection(s) {worst:.2f} ms (budget {verdict})")
    report.row(json.dumps(results))
    report.end()
    return 0 if args.smoke or worst <= args.budget_ms else 1


if __name__ == "__main__":
    sys.exit(main())
