"""`make bench-smoke`: every benchmark's `--smoke` run, one after the other, on one throwaway
PostgreSQL server: the migrations are applied once to a database each benchmark copies (which
saves an initdb and a migration per benchmark). Exits 1 when any of them fails, or when a
benchmark script is not listed here.

    .venv/bin/python bench/smoke.py
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/: the shared harness
from harness import TEMPLATE_ENV, fail, migrate_database, workspace

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = (
    "bench/releases/bench.py",
    "bench/releases/upload_rss.py",
    "bench/releases/console_upload_rss.py",
    "bench/releases/update_keys.py",
    "bench/releases/downloads.py",
    "bench/releases/feeds.py",
    "bench/releases/insights.py",
    "bench/releases/versus.py",
    "bench/orgs/bench.py",
    "bench/pages/bench.py",
    "bench/accounts/bench.py",
    "bench/compat/bench.py",
    "bench/events/bench.py",
    "bench/events/grpc_ceiling.py",
    "bench/proxy/bench.py",
    "bench/proxy/micro_cache.py",
)
NOT_BENCHMARKS = (  # scripts that measure no throughput
    "bench/releases/baseline.py",
    "bench/releases/trace_update_check.py",  # the files and lines an update check runs
    "bench/smoke.py",
)
SMOKE_SECONDS = 120  # a smoke run takes seconds; this only bounds a hung one


def unlisted() -> list[str]:
    """Scripts that look like benchmarks (a `__main__` block) and are missing from BENCHMARKS."""
    candidates = list(ROOT.glob("bench/**/*.py"))
    scripts = {
        str(path.relative_to(ROOT))
        for path in candidates
        if re.search(r"^if __name__ == .__main__.:", path.read_text(), re.M)
    }
    return sorted(scripts - set(BENCHMARKS) - set(NOT_BENCHMARKS))


def run(script: str, env: dict[str, str]) -> str:
    """Run one smoke; "passed" or what went wrong. A hung one is interrupted (SIGINT: its cleanup
    runs and stops what it started), then killed, with every process it started."""
    process = subprocess.Popen(
        [sys.executable, script, "--smoke"], cwd=ROOT, env=env, start_new_session=True
    )
    try:
        code = process.wait(SMOKE_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return f"FAILED: timed out after {SMOKE_SECONDS} s"
    return "passed" if code == 0 else f"FAILED: exit status {code}"


def main() -> int:
    missing = unlisted()
    if missing:
        fail(f"no smoke run for {', '.join(missing)}: add --smoke to it, list it in bench/smoke.py")
    started = time.monotonic()
    failed = []
    with workspace("forge-bench-smoke-") as (_, database_url):
        migrate_database(database_url)
        env = {**os.environ, TEMPLATE_ENV: database_url}
        for script in BENCHMARKS:
            print(f"\n$ {Path(sys.executable).name} {script} --smoke", flush=True)
            begun = time.monotonic()
            outcome = run(script, env)
            print(f"$ {script} --smoke: {outcome} in {time.monotonic() - begun:.1f} s", flush=True)
            if outcome != "passed":
                failed.append(script)
    spent = time.monotonic() - started
    if failed:
        fail(f"{len(failed)} smoke run(s) failed in {spent:.0f} s: {', '.join(failed)}")
    print(f"\nbench-smoke: {len(BENCHMARKS)} benchmarks passed their smoke runs in {spent:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
