"""Update-check benchmark: the releases service against a minimal aiohttp handler returning the
same bytes, measured with wrk in the same run, for repositories of 10, 1,000 and 100,000 releases.

    .venv/bin/python bench/releases/bench.py [--sizes 10,1000,100000] [--duration 10s]

Everything listens on 127.0.0.1 only; PostgreSQL is a throwaway cluster in a temporary folder.
Rows are inserted with COPY (not through the world loader) so 100,000 releases take seconds.
Prints one line per size: median requests/s and p99 of both sides over alternating rounds, the
median of the per-round throughput ratios (target: >= 0.8), and the server CPU time per request
(lowest of the rounds), which is steadier than req/s when the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

import asyncpg
from forge_common.embedded_pg import EmbeddedPostgres, free_port
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_common.testing.processes import cpu_seconds, start_forge_service, wait_until_ready

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
QUERY = "version=0.0.1&platform=darwin&arch=arm64"
ASSETS = ("App-{v}-arm64.zip", "App-{v}-x64.zip", "App-Setup-{v}.exe", "RELEASES")


async def prepare(url: str, sizes: list[int]) -> None:
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn, all_migrations(installed_services()))
        owner = await conn.fetchval(
            "INSERT INTO core.accounts (kind, name) VALUES ('user', 'bench') RETURNING id"
        )
        start = datetime(2020, 1, 1, tzinfo=UTC)
        for size in sizes:
            repo = await conn.fetchval(
                "INSERT INTO core.repositories (owner_id, name) VALUES ($1, $2) RETURNING id",
                owner,
                f"app{size}",
            )
            # tag v0.<i>.0, newer = later, so the newest is also the highest version
            releases = [
                (repo, f"v0.{i}.0", f"0.{i}.0", "notes", start + timedelta(minutes=i))
                for i in range(size)
            ]
            await conn.copy_records_to_table(
                "releases",
                schema_name="releases",
                columns=["repo_id", "tag", "title", "note", "created_at"],
                records=releases,
            )
            rows = await conn.fetch(
                "SELECT id, title FROM releases.releases WHERE repo_id = $1", repo
            )
            assets = [
                (row["id"], name.format(v=row["title"]), 1000 + k, "0" * 40, "0" * 64, "0" * 128)
                for row in rows
                for k, name in enumerate(ASSETS)
            ]
            await conn.copy_records_to_table(
                "assets",
                schema_name="releases",
                columns=["release_id", "name", "size", "sha1", "sha256", "sha512"],
                records=assets,
            )
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        body: bytes = response.read()
        return body


@dataclass(frozen=True)
class Run:
    rps: float
    p99_ms: float
    cpu_us: float  # server CPU time per request: steadier than req/s on a shared machine


def wrk(url: str, duration: str, pid: int) -> Run:
    """One bounded wrk run: requests/s, p99 latency and the server's CPU time per request."""
    cpu_before = cpu_seconds([pid])
    out = subprocess.run(
        ["wrk", "-t2", "-c64", f"-d{duration}", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    cpu = cpu_seconds([pid]) - cpu_before
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    count = int(re.search(r"(\d+) requests in", out)[1])  # type: ignore[index]
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    if "Non-2xx" in out or "Socket errors" in out:
        print(out, file=sys.stderr)
    return Run(rps, p99, cpu / max(count, 1) * 1e6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,100000")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--warmup", default="2s")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating baseline/service runs per size"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if shutil.which("wrk") is None:
        raise SystemExit("bench: wrk is missing (make bench-releases installs it)")
    folder = Path(tempfile.mkdtemp(prefix="forge-bench-"))
    pg = EmbeddedPostgres(folder / "pg")
    processes: list[subprocess.Popen[bytes]] = []
    results: list[dict[str, float]] = []
    try:
        db_url = pg.start()
        print(f"bench: loading {', '.join(map(str, sizes))} releases ...", flush=True)
        asyncio.run(prepare(db_url, sizes))
        service, base = start_forge_service("releases", db_url, folder / "storage")
        processes.append(service)
        asyncio.run(wait_until_ready(base + "readyz", within=20))
        for size in sizes:
            url = f"{base}api/v2/repos/bench/app{size}/releases/update?{QUERY}"
            body = fetch(url)
            assert json.loads(body)["name"] == f"v0.{size - 1}.0", body
            body_file = folder / f"body{size}.json"
            body_file.write_bytes(body)
            base_port = free_port()
            baseline = subprocess.Popen(
                [sys.executable, str(HERE / "baseline.py"), str(body_file), str(base_port)]
            )
            processes.append(baseline)
            base_url = (
                f"http://127.0.0.1:{base_port}/api/v2/repos/bench/app{size}/releases/update?{QUERY}"
            )
            asyncio.run(wait_until_ready(base_url, within=20))
            assert fetch(base_url) == body
            wrk(base_url, args.warmup, baseline.pid)
            wrk(url, args.warmup, service.pid)
            # alternate, so drift in the machine's load hits both sides alike
            runs = [
                (wrk(base_url, args.duration, baseline.pid), wrk(url, args.duration, service.pid))
                for _ in range(args.rounds)
            ]
            baseline.terminate()
            baseline.wait(10)
            theirs = [b for b, _ in runs]
            ours = [r for _, r in runs]
            row = {
                "releases": size,
                "rps": median(r.rps for r in ours),
                "p99_ms": median(r.p99_ms for r in ours),
                "cpu_us": min(r.cpu_us for r in ours),
                "base_rps": median(b.rps for b in theirs),
                "base_p99_ms": median(b.p99_ms for b in theirs),
                "base_cpu_us": min(b.cpu_us for b in theirs),
                # each round's two runs are adjacent in time: their ratio shares the noise
                "ratio": median(r.rps / b.rps for b, r in runs),
            }
            results.append(row)
            print(
                f"releases={size:>6}  service {row['rps']:>7.0f} req/s p99 {row['p99_ms']:6.2f} ms "
                f"{row['cpu_us']:5.1f} us/req | baseline {row['base_rps']:>7.0f} req/s "
                f"p99 {row['base_p99_ms']:6.2f} ms {row['base_cpu_us']:5.1f} us/req | "
                f"ratio {row['ratio']:.2f} (cpu {row['base_cpu_us'] / row['cpu_us']:.2f}) "
                f"rounds {' '.join(f'{r.rps / b.rps:.2f}' for b, r in runs)}",
                flush=True,
            )
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
    worst = min(r["ratio"] for r in results)
    worst_cpu = min(r["base_cpu_us"] / r["cpu_us"] for r in results)
    print(
        f"bench: worst throughput ratio {worst:.2f}, worst CPU-per-request ratio {worst_cpu:.2f} "
        "(target >= 0.80)"
    )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
