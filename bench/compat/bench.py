"""Compat benchmark (docs/compat.md): the Gitea- and GitHub-shaped release lists against the
version-2 list of the same repository, measured with wrk in the same run (throughput ratio
target >= 0.8: the extra shaping must not cost more than a fifth), and GitHub's `latest` against
version 2's.

    .venv/bin/python bench/compat/bench.py [--duration 10s] [--rounds 3] [--smoke]

The repository has 20 releases with a desktop app's six assets each; every list asks for one page
of 30 (all 20 releases), anonymously. The releases service runs as one `forge serve --service`
process on 127.0.0.1; rounds alternate the three lists, so drift in the machine's load hits each
alike. `--smoke` runs 1 s rounds at 2 connections, no warm-up, and applies no target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    DESKTOP_ASSETS,
    Report,
    WrkRun,
    add_bench_app,
    add_desktop_releases,
    fail,
    migrated,
    parse_args,
    require_tool,
    service,
    warm_up,
    workspace,
    wrk,
)

RELEASES = 20
FULL = {"duration": "10s", "warmup": "2s", "rounds": 3, "connections": 16}
SMOKE = {"duration": "1s", "warmup": "0", "rounds": 1, "connections": 2}
TARGET = 0.8


async def prepare(url: str) -> None:
    async with migrated(url) as conn:
        _, repo = await add_bench_app(conn)
        await add_desktop_releases(conn, repo, RELEASES, "notes")
        await conn.execute("ANALYZE")


def check_answers(urls: dict[str, str]) -> None:
    """Fail unless each list answers every release, newest first."""
    for name, url in urls.items():
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
            body = json.loads(response.read())
        tags = [r["tag_name"] for r in body] if isinstance(body, list) else [body["tag_name"]]
        if tags[0] != f"v1.{RELEASES - 1}.0" or ("latest" not in name and len(tags) != RELEASES):
            fail(f"{name} did not answer the {RELEASES} releases: {tags}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up runs (0: none)")
    parser.add_argument("--rounds", type=int, help="alternating runs of each comparison")
    parser.add_argument("--connections", type=int, help="wrk -c of every run")
    args = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    report = Report("bench-compat", args.smoke)
    c = args.connections
    with workspace("forge-bench-compat-") as (folder, db_url):
        report.row(f"loading {RELEASES} releases of {len(DESKTOP_ASSETS)} assets ...")
        asyncio.run(prepare(db_url))
        with service("releases", db_url, folder / "releases") as (releases, base):
            urls = {
                "v2 list": f"{base}api/v2/repos/bench/app/releases?limit=30",
                "gitea list": f"{base}api/v1/repos/bench/app/releases?limit=30",
                "github list": f"{base}api/v3/repos/bench/app/releases?per_page=30",
                "v2 latest": f"{base}api/v2/repos/bench/app/releases/latest",
                "github latest": f"{base}api/v3/repos/bench/app/releases/latest",
            }
            check_answers(urls)

            def run(url: str, duration: str) -> WrkRun:
                return wrk(url, duration, threads=1, connections=c, cpu_of={"s": [releases.pid]})

            if warm_up(args.warmup):
                for url in urls.values():
                    run(url, args.warmup)
            rounds = [
                {n: run(u, args.duration) for n, u in urls.items()} for _ in range(args.rounds)
            ]
    ok = True
    for name, baseline in (
        ("gitea list", "v2 list"),
        ("github list", "v2 list"),
        ("github latest", "v2 latest"),
    ):
        ratios = [r[name].rps / r[baseline].rps for r in rounds]
        ratio = median(ratios)
        ok = ok and ratio >= TARGET
        report.row(
            f"{name:13} c={c}: {median(r[name].rps for r in rounds):>6.0f} req/s "
            f"p99 {median(r[name].p99_ms for r in rounds):6.2f} ms "
            f"{min(r[name].cpu_us['s'] for r in rounds):5.0f} us/req | {baseline} "
            f"{median(r[baseline].rps for r in rounds):>6.0f} req/s "
            f"p99 {median(r[baseline].p99_ms for r in rounds):6.2f} ms "
            f"{min(r[baseline].cpu_us['s'] for r in rounds):5.0f} us/req | ratio {ratio:.2f} "
            f"rounds {' '.join(f'{x:.2f}' for x in ratios)}  ({rounds[0][name].command})"
        )
    verdict = "not applied to a smoke run" if args.smoke else "applied"
    report.row(f"target: every ratio >= {TARGET:.2f}: {verdict}")
    report.end()
    return 0 if args.smoke or ok else 1


if __name__ == "__main__":
    sys.exit(main())
