"""What nginx in front costs: wrk against the releases service directly and through the proxy,
alternating, in the same run (absolute numbers drift between runs; the ratio is the figure).

    make bench-proxy            (or: .venv/bin/python tests-e2e/bench_proxy.py [--seconds N])

Starts the same stack as the end-to-end tests (embedded PostgreSQL, the three services, the
example plugin, nginx from deploy/nginx) with their world, on 127.0.0.1 only, and stops it after.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from forge_common.db import connect
from forge_common.embedded_pg import EmbeddedPostgres
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services

HERE = Path(__file__).resolve().parent
PATHS = {
    "update check": "/api/v2/repos/acme/app/releases/update?version=1.0.0&platform=linux&arch=x64",
    "release list": "/api/v2/repos/acme/app/releases",
}


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def _migrate(url: str) -> None:
    conn = await connect(url)
    try:
        await migrate(conn, all_migrations(installed_services()))
    finally:
        await conn.close()


def wrk(url: str, seconds: int) -> tuple[float, str, str]:
    """(requests per second, p99 latency, non-2xx line or '') of one wrk run."""
    argv = ["wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", url]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx.*", out)
    return rps, p99, errors.group(0) if errors else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, default=3, help="direct/proxy pairs per path")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("bench-proxy: wrk is not installed (make deploy-tools)", file=sys.stderr)
        return 1
    stacks = _module("forge_e2e_conftest", HERE / "conftest.py")
    world = _module("forge_e2e_world", HERE / "test_through_proxy.py").WORLD
    work = Path(tempfile.mkdtemp(prefix="forge-bench-proxy-"))
    pg = EmbeddedPostgres(work / "postgres")
    try:
        url = pg.start()
        asyncio.run(_migrate(url))
        running = stacks.start_stack(url, world, work / "stack")
        stack = next(running)
        try:
            print(f"wrk -t2 -c64 -d{args.seconds}s --latency, {args.rounds} round(s) each")
            for name, path in PATHS.items():
                ratios = []
                for _ in range(args.rounds):
                    direct = wrk(f"http://127.0.0.1:{stack.ports['releases']}{path}", args.seconds)
                    proxied = wrk(f"{stack.base_url.rstrip('/')}{path}", args.seconds)
                    ratios.append(proxied[0] / direct[0])
                    print(
                        f"{name}: direct {direct[0]:.0f} req/s (p99 {direct[1]}) "
                        f"| nginx {proxied[0]:.0f} req/s (p99 {proxied[1]}) "
                        f"| ratio {ratios[-1]:.2f} {direct[2]} {proxied[2]}".rstrip(),
                        flush=True,
                    )
                print(
                    f"{name}: nginx/direct throughput, median ratio {statistics.median(ratios):.2f}"
                )
        finally:
            running.close()  # runs the stack's finally: every process stopped
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
