"""Insights query benchmark: `GET /api/v2/repos/bench/app/insights` over a year of daily rows for
200 versions × 6 platforms (438,000 rows of `releases.insights_daily` and their per-dimension
sums, as the writer stores them), through the releases service with a token, measured with wrk.

    .venv/bin/python bench/releases/insights.py [--duration 10s] [--smoke]

Prints, for each query (a year by version: 200 series of 365 days; a year by platform; the last
30 days by version), requests/s and p50/p99 with one connection (the latency of one query:
insights are read by a repository's admins, not a crowd) and the service's CPU per request.
Target: p99 under 50 ms for the year by version. `--smoke` loads 10 days of 5 versions and runs 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import urllib.request
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    Report,
    add_bench_app,
    fail,
    migrated,
    parse_args,
    require_tool,
    service,
    workspace,
    wrk,
)

TOKEN = "bench-insights-token"  # noqa: S105 - a throwaway database's
PLATFORMS = ("darwin-arm64", "darwin-x64", "windows-x64", "windows-arm64", "linux-x64", "other")
DIMENSIONS = ("running", "offered", "platform", "arch", "channel", "feed", "file")
TARGET_P99_MS = 50.0
FULL = {"days": 365, "versions": 200, "duration": "10s"}
SMOKE = {"days": 10, "versions": 5, "duration": "1s"}
END = "2026-06-30"


async def prepare(url: str, days: int, versions: int) -> None:
    """User `bench` (with a token) and `app`; daily counts for every day, version and platform."""
    async with migrated(url) as conn:
        owner, repo = await add_bench_app(conn)
        await conn.execute(
            "INSERT INTO core.access_tokens (user_id, token_sha256) VALUES ($1, $2)",
            owner,
            hashlib.sha256(TOKEN.encode()).digest(),
        )
        await conn.execute(
            """INSERT INTO releases.insights_daily
                   (repo_id, day, kind, feed, running, offered, platform, arch, channel, file, n)
               SELECT $1, $2::date - d, 'check', 'update', '1.' || v || '.0', '1.199.0',
                      split_part(p, '-', 1), split_part(p, '-', 2), 'stable', '',
                      1 + (d * 7 + v * 13) % 500
                 FROM generate_series(0, $3 - 1) AS d, generate_series(0, $4 - 1) AS v,
                      unnest($5::text[]) AS p""",
            repo,
            date.fromisoformat(END),
            days,
            versions,
            list(PLATFORMS),
        )
        for dim in DIMENSIONS:  # what the writer adds beside each row (insights/queries.py)
            await conn.execute(
                f"""WITH per_day AS (
                        SELECT repo_id, kind, {dim} AS value, day, sum(n) AS n
                          FROM releases.insights_daily GROUP BY 1, 2, 3, 4),
                    per_month AS (
                        SELECT repo_id, kind, value, date_trunc('month', day)::date AS month,
                               array_agg(extract(day FROM day)::int) AS days, array_agg(n) AS ns
                          FROM per_day GROUP BY 1, 2, 3, 4)
                    INSERT INTO releases.insights_monthly_by
                        (repo_id, kind, dim, value, month, counts)
                    SELECT repo_id, kind, '{dim}', value, month,
                           ARRAY(SELECT coalesce(ns[array_position(days, i)], 0)
                                   FROM generate_series(1, 31) AS i ORDER BY i)
                      FROM per_month"""
            )
        await conn.execute("VACUUM ANALYZE releases.insights_monthly_by")


def check(url: str, series: int, days: int) -> None:
    """The service answers the window asked for, with the expected number of series."""
    headers = {"Authorization": f"token {TOKEN}"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        body = json.loads(response.read())
    got = body["checks"]["series"]
    if len(got) != series or len(body["buckets"]) != days or len(got[0]["counts"]) != days:
        fail(f"{url}: {len(got)} series of {len(body['buckets'])} days, not {series} × {days}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, help="days of daily rows")
    parser.add_argument("--versions", type=int, help="versions counted every day")
    parser.add_argument("--duration", help="length of each wrk run")
    args: argparse.Namespace = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    report = Report("bench-insights", args.smoke)
    with workspace("forge-bench-insights-") as (folder, db_url):
        rows = args.days * args.versions * len(PLATFORMS)
        report.row(f"loading {rows} daily rows ({args.days} days × {args.versions} versions × 6)")
        asyncio.run(prepare(db_url, args.days, args.versions))
        with service("releases", db_url, folder / "storage") as (process, base):
            api = f"{base}api/v2/repos/bench/app/insights"
            first = f"{args.days - 1}"
            queries = {
                "year by version": (f"?by=version&to={END}", args.versions, args.days),
                "year by platform": (f"?by=platform&to={END}", 4, args.days),
                "30 days by version": (f"?to={END}", args.versions, min(30, args.days)),
            }
            results = {}
            for name, (query, series, days) in queries.items():
                if days == args.days:
                    query += f"&from={_minus(END, int(first))}"
                check(api + query, series, days)
                run = wrk(
                    api + query,
                    args.duration,
                    threads=1,
                    connections=1,
                    headers={"Authorization": f"token {TOKEN}"},
                    cpu_of={"server": [process.pid]},
                )
                results[name] = {"rps": run.rps, "p50_ms": run.p50_ms, "p99_ms": run.p99_ms}
                report.row(
                    f"{name:<20} {run.rps:7.1f} req/s  p50 {run.p50_ms:6.2f} ms  "
                    f"p99 {run.p99_ms:6.2f} ms  server {run.cpu_us['server'] / 1000:6.2f} ms/req"
                )
    worst = results["year by version"]["p99_ms"]
    report.row(f"year by version: p99 {worst:.1f} ms (target < {TARGET_P99_MS:.0f} ms)")
    report.row(json.dumps(results))
    report.end()
    return 0


def _minus(day: str, days: int) -> str:
    return (date.fromisoformat(day) - timedelta(days=days)).isoformat()


if __name__ == "__main__":
    sys.exit(main())
