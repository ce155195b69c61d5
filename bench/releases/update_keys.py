"""Update-key benchmark: the update check of a private repository with `?key=` (a key lookup and
freshly signed URLs on every request) against the same check with a token in `Authorization`
(the access query on every request), both on one `forge serve --service releases`, in the same
run, alternating.

    .venv/bin/python bench/releases/update_keys.py [--duration 10s] [--rounds 3] [--smoke]

Prints each side's median requests/s and p99, the median of the per-round throughput ratios
(keyed / token; target >= 0.8: a keyed check is a hot path like any other) and the server CPU
time per request. `--smoke` runs one round of 1 s with no warm-up: it checks the benchmark works.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import shlex
import sys
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    Report,
    fail,
    migrated,
    parse_args,
    ratio,
    require_tool,
    service,
    warm_up,
    workspace,
    wrk,
    wrk_argv,
)

QUERY = "version=0.0.1&platform=darwin&arch=arm64"
TOKEN = "bench-update-keys-token"  # noqa: S105 - a throwaway database's
KEY = "forge_uk_bench-update-keys-key"
FULL = {"duration": "10s", "warmup": "2s", "rounds": 3}
SMOKE = {"duration": "1s", "warmup": "0", "rounds": 1}


async def prepare(url: str) -> None:
    """User `bench` with a token, its private repository `app` of 10 releases, an update key."""
    async with migrated(url) as conn:
        owner = await conn.fetchval(
            "INSERT INTO core.accounts (kind, name) VALUES ('user', 'bench') RETURNING id"
        )
        await conn.execute(
            "INSERT INTO core.access_tokens (user_id, token_sha256) VALUES ($1, $2)",
            owner,
            hashlib.sha256(TOKEN.encode()).digest(),
        )
        repo = await conn.fetchval(
            "INSERT INTO core.repositories (owner_id, name, private) VALUES ($1, 'app', true)"
            " RETURNING id",
            owner,
        )
        start = datetime(2020, 1, 1, tzinfo=UTC)
        for i in range(10):
            release = await conn.fetchval(
                "INSERT INTO releases.releases (repo_id, tag, created_at) VALUES ($1, $2, $3)"
                " RETURNING id",
                repo,
                f"v0.{i}.0",
                start + timedelta(minutes=i),
            )
            await conn.execute(
                "INSERT INTO releases.assets (release_id, name, size, sha1, sha256, sha512)"
                " VALUES ($1, $2, 1000, $3, $4, $5)",
                release,
                f"App-0.{i}.0-arm64.zip",
                "0" * 40,
                "0" * 64,
                "0" * 128,
            )
        await conn.execute(
            "INSERT INTO releases.update_keys (repo_id, name, key_sha256) VALUES ($1, 'bench', $2)",
            repo,
            hashlib.sha256(KEY.encode()).digest(),
        )
        await conn.execute("ANALYZE")


def fetch(url: str, headers: dict[str, str]) -> dict[str, object]:
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
        body: dict[str, object] = json.loads(response.read())
        return body


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up run of each side (0: none)")
    parser.add_argument("--rounds", type=int, help="alternating token/key runs")
    args = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    report = Report("bench-update-keys", args.smoke)
    report.row(f"{shlex.join(wrk_argv('URL', args.duration))}, {args.rounds} round(s)")
    auth = {"Authorization": f"token {TOKEN}"}
    with workspace("forge-bench-keys-") as (folder, db_url):
        asyncio.run(prepare(db_url))
        with service("releases", db_url, folder / "storage") as (process, base):
            check = f"{base}api/v2/repos/bench/app/releases/update?{QUERY}"
            keyed = f"{check}&key={KEY}"
            if "signature=" not in str(fetch(keyed, {}).get("url")):
                fail("the keyed update check did not hand out a signed URL")
            if fetch(check, auth).get("name") != "v0.9.0":
                fail("the token update check did not answer the newest release")
            cpu = {"server": [process.pid]}
            if warm_up(args.warmup):
                wrk(check, args.warmup, headers=auth, cpu_of=cpu)
                wrk(keyed, args.warmup, cpu_of=cpu)
            runs = [
                (
                    wrk(check, args.duration, headers=auth, cpu_of=cpu),
                    wrk(keyed, args.duration, cpu_of=cpu),
                )
                for _ in range(args.rounds)
            ]
    ratios = [k.rps / t.rps for t, k in runs]
    token_cpu = min(t.cpu_us["server"] for t, _ in runs)
    key_cpu = min(k.cpu_us["server"] for _, k in runs)
    report.row(
        f"token {median(t.rps for t, _ in runs):7.0f} req/s p99 "
        f"{median(t.p99_ms for t, _ in runs):6.2f} ms {token_cpu:5.1f} us/req | "
        f"key {median(k.rps for _, k in runs):7.0f} req/s p99 "
        f"{median(k.p99_ms for _, k in runs):6.2f} ms {key_cpu:5.1f} us/req | "
        f"ratio {median(ratios):.2f} (cpu {ratio(token_cpu, key_cpu, 'CPU per request'):.2f}) "
        f"rounds {' '.join(f'{r:.2f}' for r in ratios)} (target >= 0.80)"
    )
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
