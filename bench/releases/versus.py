"""This checkout's update check against another checkout's, side by side: the direct measure of
what a change costs the hot path, where bench.py measures each against the bare handler.

    .venv/bin/python bench/releases/versus.py --against ../before [--size 1000] [--rounds 6]
    .venv/bin/python bench/releases/versus.py --against . --rollout-plan this \
        [--evaluation-seconds 0.2]

`--against` is a checkout of an earlier revision with its own `.venv` (`git worktree add
../before REV && make -C ../before install`). Each side gets a database of the same throwaway
PostgreSQL, migrated by its own code and filled with the same `--size` releases (bench.py's
rows), and is served by its own `forge serve --service releases`. Then rounds of the same update
check (a kept answer, as an installed app's check mostly is): both servers at once on one CPU and
two wrk on the other (harness.side_by_side), so the scheduler gives the servers equal CPU time and
the ratio of their throughputs is the ratio of their work per request, whatever the machine's
speed does meanwhile. Prints each round's ratio (this checkout / the other) and their median.
Bodies must be equal byte for byte but for each server's address (the same answer).

`--rollout-plan this` (or `other`) gives that side's newest release a running rollout plan (one
step at 100 %, both gates on, held a day: harness.add_rollout_plans), evaluated at the service's
default interval or every `--evaluation-seconds`: with `--against .`, what a running plan costs
the check, the evaluator's rounds included (docs/rollouts.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

import asyncpg
from forge_common.embedded_pg import free_port
from forge_testing.processes import forge_env, wait_until_ready

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import add_rollout_plans, fail, require_tool, side_by_side, stop, workspace

QUERY = "version=0.0.1&platform=darwin&arch=arm64"
ASSETS = ("App-{v}-arm64.zip", "App-{v}-x64.zip", "App-Setup-{v}.exe", "RELEASES")


async def fill(url: str, size: int, plan: bool) -> None:
    """bench.py's repository `bench/app` of `size` releases, into a migrated database; `plan`: a
    running rollout plan at 100 % on its newest release."""
    conn = await asyncpg.connect(url)
    try:
        owner = await conn.fetchval(
            "INSERT INTO core.accounts (kind, name) VALUES ('user', 'bench') RETURNING id"
        )
        repo = await conn.fetchval(
            "INSERT INTO core.repositories (owner_id, name) VALUES ($1, 'app') RETURNING id", owner
        )
        start = datetime(2020, 1, 1, tzinfo=UTC)
        await conn.copy_records_to_table(
            "releases",
            schema_name="releases",
            columns=["repo_id", "tag", "title", "note", "created_at"],
            records=[
                (repo, f"v0.{i}.0", f"0.{i}.0", "notes", start + timedelta(minutes=i))
                for i in range(size)
            ],
        )
        rows = await conn.fetch("SELECT id, title FROM releases.releases WHERE repo_id = $1", repo)
        await conn.copy_records_to_table(
            "assets",
            schema_name="releases",
            columns=["release_id", "name", "size", "sha1", "sha256", "sha512"],
            records=[
                (row["id"], name.format(v=row["title"]), 1000 + k, "0" * 40, "0" * 64, "0" * 128)
                for row in rows
                for k, name in enumerate(ASSETS)
            ],
        )
        if plan:
            await add_rollout_plans(conn, 100)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


async def create_database(url: str, name: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return url.rsplit("/", 1)[0] + "/" + name


@contextlib.contextmanager
def served(
    checkout: Path, database_url: str, storage: Path, extra_env: dict[str, str]
) -> Iterator[tuple[int, str]]:
    """`checkout`'s own forge, migrating its database, then serving the releases service."""
    forge = str(checkout / ".venv" / "bin" / "forge")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = forge_env(database_url, url, storage, extra_env)
    subprocess.run([forge, "db", "migrate"], env=env, check=True, capture_output=True)
    command = [forge, "serve", "--service", "releases", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=env)
    try:
        asyncio.run(wait_until_ready(url + "readyz", exit_code=process.poll, within=60))
        yield process.pid, url
    finally:
        stop(process)


def body(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - loopback
        return bytes(answer.read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--size", type=int, default=1000, help="releases in the repository")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--duration", default="5s", help="of each round (wrk's syntax)")
    parser.add_argument("--rollout-plan", choices=("this", "other"), help="the side with a plan")
    parser.add_argument("--evaluation-seconds", help="ROLLOUT_EVALUATION_SECONDS of that side")
    args = parser.parse_args()
    plan_env = {}
    if args.evaluation_seconds:
        plan_env["ROLLOUT_EVALUATION_SECONDS"] = args.evaluation_seconds
    require_tool("wrk")
    here = Path(__file__).resolve().parents[2]
    if not (args.against / ".venv" / "bin" / "forge").exists():
        fail(f"{args.against} has no .venv/bin/forge: run make install there")
    with workspace("forge-versus-") as (folder, cluster_url):
        urls, env = {}, {}
        for side in ("this", "other"):
            env[side] = plan_env if args.rollout_plan == side else {}
            urls[side] = asyncio.run(create_database(cluster_url, f"versus_{side}"))
        with (
            served(here, urls["this"], folder / "this", env["this"]) as (this_pid, this_url),
            served(args.against, urls["other"], folder / "other", env["other"]) as (
                other_pid,
                other_url,
            ),
        ):
            for side, url in urls.items():
                asyncio.run(fill(url, args.size, plan=args.rollout_plan == side))
            check = f"api/v2/repos/bench/app/releases/update?{QUERY}"
            # the same answer but for each server's own address in the download URL
            answers = (
                body(this_url + check).replace(this_url.encode(), b"BASE/"),
                body(other_url + check).replace(other_url.encode(), b"BASE/"),
            )
            if answers[0] != answers[1]:
                fail(f"the two checkouts answer the check differently: {answers!r}")
            ratios = []
            for n in range(args.rounds):
                # alternate which wrk starts first, so neither side always has the head start
                pair = [(this_url + check, this_pid), (other_url + check, other_pid)]
                runs = side_by_side(pair if n % 2 == 0 else pair[::-1], args.duration)
                this, other = runs if n % 2 == 0 else runs[::-1]
                ratios.append(this.rps / other.rps)
                print(
                    f"round {n + 1}: this {this.rps:.0f} req/s, other "
                    f"{other.rps:.0f} req/s, ratio {ratios[-1]:.3f}",
                    flush=True,
                )
            print(f"median ratio (this / other) over {args.rounds} rounds: {median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
