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

import asyncio
import hashlib
import json
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

QUERY = "version=0.0.1&platform=darwin&arch=arm64"
TOKEN = "bench-update-keys-token"  # noqa: S105 - a throwaway database's
KEY = "forge_uk_bench-update-keys-key"


async def prepare(url: str) -> None:
    """User `bench` with a token, its private repository `app` of 10 releases, an update key."""
    async with migrated(url) as conn:
        owner, repo = await add_bench_app(conn, private=True)
        await conn.execute(
            "INSERT INTO core.access_tokens (user_id, token_sha256) VALUES ($1, $2)",
            owner,
            hashlib.sha256(TOKEN.encode()).digest(),
        )
        await add_desktop_releases(conn, repo, 10, "", ("App-{v}-arm64.zip",))
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
    args = alternating_args(__doc__, "alternating token/key runs")
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
            if fetch(check, auth).get("name") != "v1.9.0":
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
    report.row(comparison(runs, "token", "key"))
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
