"""Pages benchmark (docs/pages.md "Speed"): the organization page of a big organization at 16
connections (p99 budget 20 ms), and the download page against the update check of the same
repository, measured with wrk in the same run (throughput ratio target >= 0.8).

    .venv/bin/python bench/pages/bench.py [--duration 10s] [--rounds 3] [--smoke]

The organization is services/orgs/tests/big_org.sql (10,000 members, 1,000 repositories, 100
pins), as bench/orgs uses; the repository has 20 releases with a desktop app's assets. The orgs
and releases services run as one `forge serve --service` process each, on 127.0.0.1. The
download page is asked for by a macOS arm64 visitor (User-Agent and client hints) and the update
check for darwin/arm64, both anonymously; rounds alternate, so drift in the machine's load hits
both sides alike. The overview API is measured next to the organization page for reference.
`--smoke` runs 1 s rounds at 2 connections, no warm-up, and applies no budget.
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

ROOT = Path(__file__).resolve().parents[2]
BIG_ORG_SQL = ROOT / "services/orgs/tests/big_org.sql"
RELEASES = 20
MAC_ARM = {
    "User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36",
    "Sec-CH-UA-Platform": '"macOS"',
    "Sec-CH-UA-Arch": '"arm"',
}
UPDATE_QUERY = "version=0.0.1&platform=darwin&arch=arm64"
FULL = {"duration": "10s", "warmup": "2s", "rounds": 3, "connections": 16}
SMOKE = {"duration": "1s", "warmup": "0", "rounds": 1, "connections": 2}
NOTE = "## What's new\n\n* Faster start\n* Smaller download\n\nSee [the blog](https://example.com)."


async def prepare(url: str) -> None:
    async with migrated(url) as conn:
        await conn.execute(BIG_ORG_SQL.read_text())
        _, repo = await add_bench_app(conn, description="A desktop app")
        await add_desktop_releases(conn, repo, RELEASES, NOTE)
        await conn.execute("ANALYZE")


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[str, bytes]:
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
        return response.headers.get_content_type(), response.read()


def check_answers(org_page: str, download: str, update: str) -> None:
    """Fail unless each URL answers what it is measured for."""
    kind, body = fetch(org_page)
    if kind != "text/html" or b"Big Org" not in body:
        fail(f"the organization page did not answer: {kind} {body[:200]!r}")
    newest = f"v1.{RELEASES - 1}.0"
    kind, body = fetch(download, MAC_ARM)
    arm64 = f"/releases/download/{newest}/App-1.{RELEASES - 1}.0-arm64.zip".encode()
    if kind != "text/html" or b'class="button download"' not in body or arm64 not in body:
        fail(f"the download page did not offer the arm64 zip of {newest}: {body[:300]!r}")
    _, body = fetch(update)
    if json.loads(body).get("name") != newest:
        fail(f"the update check did not answer {newest}: {body!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up runs (0: none)")
    parser.add_argument("--rounds", type=int, help="alternating runs of each comparison")
    parser.add_argument("--connections", type=int, help="wrk -c of every run")
    parser.add_argument("--budget-ms", type=float, default=20.0)
    args = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    report = Report("bench-pages", args.smoke)
    c = args.connections
    with workspace("forge-bench-pages-") as (folder, db_url):
        report.row(f"loading the big organization and {RELEASES} releases ...")
        asyncio.run(prepare(db_url))
        with (
            service("orgs", db_url, folder / "orgs") as (orgs, orgs_base),
            service("releases", db_url, folder / "releases") as (releases, releases_base),
        ):
            org_page = orgs_base + "big"
            overview = orgs_base + "api/v1/orgs/big/overview"
            download = releases_base + "bench/app/download"
            update = f"{releases_base}api/v2/repos/bench/app/releases/update?{UPDATE_QUERY}"
            check_answers(org_page, download, update)

            def run(
                url: str, pid: int, duration: str, headers: dict[str, str] | None = None
            ) -> WrkRun:
                return wrk(
                    url, duration, threads=1, connections=c, headers=headers, cpu_of={"s": [pid]}
                )

            if warm_up(args.warmup):
                run(org_page, orgs.pid, args.warmup)
                run(download, releases.pid, args.warmup, MAC_ARM)
                run(update, releases.pid, args.warmup)
            org_runs = [
                (run(overview, orgs.pid, args.duration), run(org_page, orgs.pid, args.duration))
                for _ in range(args.rounds)
            ]
            dl_runs = [
                (
                    run(update, releases.pid, args.duration),
                    run(download, releases.pid, args.duration, MAC_ARM),
                )
                for _ in range(args.rounds)
            ]
    page_p99 = median(p.p99_ms for _, p in org_runs)
    report.row(
        f"org page  c={c}: {median(p.rps for _, p in org_runs):>6.0f} req/s  "
        f"p50 {median(p.p50_ms for _, p in org_runs):6.2f} ms  p99 {page_p99:6.2f} ms  "
        f"{min(p.cpu_us['s'] for _, p in org_runs):6.0f} us/req | overview API "
        f"{median(a.rps for a, _ in org_runs):>6.0f} req/s p99 "
        f"{median(a.p99_ms for a, _ in org_runs):6.2f} ms  ({org_runs[0][1].command})"
    )
    ratios = [d.rps / u.rps for u, d in dl_runs]
    dl_ratio = median(ratios)
    report.row(
        f"download  c={c}: {median(d.rps for _, d in dl_runs):>6.0f} req/s  "
        f"p99 {median(d.p99_ms for _, d in dl_runs):6.2f} ms "
        f"{min(d.cpu_us['s'] for _, d in dl_runs):5.0f} us/req | update check "
        f"{median(u.rps for u, _ in dl_runs):>6.0f} req/s p99 "
        f"{median(u.p99_ms for u, _ in dl_runs):6.2f} ms "
        f"{min(u.cpu_us['s'] for u, _ in dl_runs):5.0f} us/req | ratio {dl_ratio:.2f} "
        f"rounds {' '.join(f'{r:.2f}' for r in ratios)}  ({dl_runs[0][1].command})"
    )
    verdict = "not applied to a smoke run" if args.smoke else "applied"
    report.row(
        f"org page p99 {page_p99:.2f} ms (budget {args.budget_ms:.0f} ms), download/update "
        f"throughput {dl_ratio:.2f} (target >= 0.80): {verdict}"
    )
    report.end()
    ok = page_p99 <= args.budget_ms and dl_ratio >= 0.8
    return 0 if args.smoke or ok else 1


if __name__ == "__main__":
    sys.exit(main())
