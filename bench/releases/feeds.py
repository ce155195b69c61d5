"""Update-feed benchmark: each feed (Squirrel.Mac in the update.electronjs.org shape,
Squirrel.Windows RELEASES, electron-updater's latest-mac.yml) against the spec's update check, on
one `forge serve --service releases`, in the same run, alternating, for a public repository of 10
releases. Feeds are hot paths too: every installed app asks on every start.

    .venv/bin/python bench/releases/feeds.py [--duration 10s] [--rounds 3] [--smoke]

Prints, per feed, the median requests/s and p99, the median of the per-round throughput ratios
(feed / update check; target >= 0.8) and the server CPU time per request. `--smoke` runs one
round of 1 s with no warm-up: it checks the benchmark works.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    Report,
    add_bench_app,
    add_desktop_releases,
    alternating_args,
    comparison,
    fail,
    migrated,
    require_tool,
    service,
    warm_up,
    workspace,
    wrk,
    wrk_argv,
)

FEED_ASSETS = ("App-{v}-arm64-mac.zip", "App-{v}-full.nupkg", "App-{v}-delta.nupkg")
CHECK = "api/v2/repos/bench/app/releases/update?version=0.0.1&platform=darwin&arch=arm64"
# feed name → (path, text the answer must contain)
FEEDS = {
    "squirrel-mac": ("bench/app/darwin-arm64/0.0.1", "App-1.9.0-arm64-mac.zip"),
    "squirrel-windows": (
        "api/v2/repos/bench/app/releases/feeds/squirrel/x64/RELEASES",
        "App-1.9.0-full.nupkg",
    ),
    "electron-yml": ("api/v2/repos/bench/app/releases/feeds/electron/latest-mac.yml", "1.9.0"),
}


async def prepare(url: str) -> None:
    """User `bench` and its public repository `app`: 10 releases, each with a macOS zip, a full
    and a delta Squirrel package (electron-builder and Squirrel default names)."""
    async with migrated(url) as conn:
        _, repo = await add_bench_app(conn)
        await add_desktop_releases(conn, repo, 10, "", FEED_ASSETS)
        await conn.execute("ANALYZE")


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        return str(response.read().decode())


def main() -> int:
    args = alternating_args(__doc__, "alternating check/feed runs")
    require_tool("wrk")
    report = Report("bench-feeds", args.smoke)
    report.row(f"{shlex.join(wrk_argv('URL', args.duration))}, {args.rounds} round(s)")
    with workspace("forge-bench-feeds-") as (folder, db_url):
        asyncio.run(prepare(db_url))
        with service("releases", db_url, folder / "storage") as (process, base):
            if '"name":"v1.9.0"' not in fetch(base + CHECK).replace(" ", ""):
                fail("the update check did not answer the newest release")
            for name, (path, expected) in FEEDS.items():
                if expected not in fetch(base + path):
                    fail(f"the {name} feed did not answer {expected}")
            cpu = {"server": [process.pid]}
            if warm_up(args.warmup):
                for url in [base + CHECK, *(base + path for path, _ in FEEDS.values())]:
                    wrk(url, args.warmup, cpu_of=cpu)
            for name, (path, _) in FEEDS.items():
                runs = [
                    (
                        wrk(base + CHECK, args.duration, cpu_of=cpu),
                        wrk(base + path, args.duration, cpu_of=cpu),
                    )
                    for _ in range(args.rounds)
                ]
                report.row(f"{name:16} {comparison(runs, 'check', 'feed')}")
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
