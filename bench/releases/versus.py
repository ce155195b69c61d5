"""This checkout's update check against another checkout's, side by side: the direct measure of
what a change costs the hot path, where bench.py measures each against the bare handler.

    .venv/bin/python bench/releases/versus.py --against ../before [--size 1000] [--rounds 6]
    .venv/bin/python bench/releases/versus.py --against . --rollout-plan this \
        [--evaluation-seconds 0.2]

`--against` is a checkout of an earlier revision with its own `.venv` (`git worktree add
../before REV && make -C ../before install`). Each side gets a database of the same throwaway
PostgreSQL, migrated by its own code and filled with the same `--size` releases
(harness.add_desktop_releases), and is served by its own `forge serve --service releases`.
Then rounds of the same update check (a kept answer, as an installed app's check mostly is):
both servers at once on one CPU and two wrk on the other (harness.side_by_side), so the
scheduler gives the servers equal CPU time and the ratio of their throughputs is the ratio of
their work per request, whatever the machine's speed does meanwhile. Prints each round's ratio
(this checkout / the other) and their median.
Bodies must be equal byte for byte but for each server's address (the same answer). `--smoke`
runs this checkout against itself, 10 releases, one round of 1 s: it checks the script works.

`--feeds`: instead of the check, each update feed (feeds.py's routes and rows, 10 releases), one
after the other, a median per feed: against another checkout, the feeds it serves too (the desktop
ones, on their assets only); against this one (`--against .`), every feed.
`--rollout-plan this` (or `other`) gives that side's newest release a running rollout plan (one
step at 100 %, both gates on, held a day: harness.add_rollout_plans), evaluated at the service's
default interval or every `--evaluation-seconds`: with `--against .`, what a running plan costs
the check, the evaluator's rounds included (docs/rollouts.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from statistics import median

import asyncpg
from forge_common.embedded_pg import free_port
from forge_testing.processes import forge_env, wait_until_ready

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from feeds import FEED_ASSETS, ROUTES, prepare, write_shared_blob
from harness import (
    DESKTOP_ASSETS,
    add_bench_app,
    add_desktop_releases,
    add_rollout_plans,
    execute,
    fail,
    require_tool,
    side_by_side,
    stop,
    workspace,
)

CHECK = "api/v2/repos/bench/app/releases/update?version=0.0.1&platform=darwin&arch=arm64"
HERE = Path(__file__).resolve().parents[2]  # this checkout
SIDES = ("this", "other")
SIGNATURE = b"-----BEGIN PGP SIGNATURE-----"
STAMPS = re.compile(rb"<(revision|timestamp)>\d+</\1>")  # a dnf repository's time of making
# the feeds an earlier revision (before the Velopack feed and the Linux repositories) serves too,
# and the assets they read
DESKTOP_FEED_ROUTES = (
    "update check (reference)",
    "electronjs darwin",
    "electronjs win32",
    "squirrel windows",
    "electron-updater yml",
    "tauri dynamic",
    "tauri latest.json",
)
FEED_ROUTES = {name: ROUTES[name][0] for name in DESKTOP_FEED_ROUTES}
DESKTOP_FEED_ASSETS = tuple(a for a in FEED_ASSETS if not a.endswith((".deb", ".rpm")))


async def fill(url: str, storage: Path, size: int, assets: tuple[str, ...], plan: bool) -> None:
    """The benchmarks' repository `bench/app` of `size` releases with `assets` each, into a
    migrated database, and the bytes the assets share in `storage`; `plan`: a running rollout
    plan at 100 % on its newest release."""
    conn = await asyncpg.connect(url)
    try:
        _, repo = await add_bench_app(conn)
        await add_desktop_releases(conn, repo, size, "notes", assets)
        if plan:
            await add_rollout_plans(conn, 100)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()
    write_shared_blob(storage)


@contextlib.contextmanager
def databases(cluster_url: str) -> Iterator[dict[str, str]]:
    """An empty database per side on the server of `cluster_url` (a server bench/smoke.py shares
    with other benchmarks: named after this process, and dropped afterwards)."""
    names = {side: f"versus_{os.getpid()}_{side}" for side in SIDES}
    for name in names.values():
        asyncio.run(execute(cluster_url, f'CREATE DATABASE "{name}"'))
    try:
        yield {side: cluster_url.rsplit("/", 1)[0] + "/" + name for side, name in names.items()}
    finally:
        for name in names.values():
            asyncio.run(execute(cluster_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


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


def rounds(this: tuple[str, int], other: tuple[str, int], args: argparse.Namespace) -> list[float]:
    """Side-by-side rounds of (url, server pid) `this` against `other`, each ratio printed."""
    ratios = []
    for n in range(args.rounds):
        # alternate which wrk starts first, so neither side always has the head start
        pair = [this, other] if n % 2 == 0 else [other, this]
        runs = side_by_side(pair, args.duration, pin=not args.smoke)
        mine, theirs = runs if n % 2 == 0 else runs[::-1]
        ratios.append(mine.rps / theirs.rps)
        print(
            f"round {n + 1}: this {mine.rps:.0f} req/s, other {theirs.rps:.0f} req/s, "
            f"ratio {ratios[-1]:.3f}",
            flush=True,
        )
    return ratios


def same_answer(this_url: str, other_url: str, path: str) -> None:
    """Both sides answer `path` alike, but for each server's own address in the URL and its own
    signature (each database made its own repository signing key) and time of making."""
    answers = tuple(
        STAMPS.sub(rb"<\1>", body(url + path).replace(url.encode(), b"BASE/").split(SIGNATURE)[0])
        for url in (this_url, other_url)
    )
    if answers[0] != answers[1]:
        fail(f"the two checkouts answer {path} differently: {answers!r}")


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="the other checkout (--smoke: this one)")
    parser.add_argument("--size", type=int, default=1000, help="releases in the repository")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--duration", default="5s", help="of each round (wrk's syntax)")
    parser.add_argument("--rollout-plan", choices=SIDES, help="the side with a running plan")
    parser.add_argument("--evaluation-seconds", help="ROLLOUT_EVALUATION_SECONDS of that side")
    parser.add_argument(
        "--feeds", action="store_true", help="the feeds both revisions serve, not the check"
    )
    parser.add_argument("--smoke", action="store_true", help="10 releases, one round of 1 s")
    args = parser.parse_args()
    if args.smoke:
        args.against = args.against or HERE
        args.size, args.rounds, args.duration = 10, 1, "1s"
    if args.against is None:
        parser.error("--against is required")
    if not (args.against / ".venv" / "bin" / "forge").exists():
        fail(f"{args.against} has no .venv/bin/forge: run make install there")
    return args


def main() -> int:
    args = options()
    require_tool("wrk")
    plan_env = {}
    if args.evaluation_seconds:
        plan_env["ROLLOUT_EVALUATION_SECONDS"] = args.evaluation_seconds
    env = {side: plan_env if args.rollout_plan == side else {} for side in SIDES}
    same = args.against.resolve() == HERE
    with (
        workspace("forge-versus-") as (folder, cluster_url),
        databases(cluster_url) as urls,
        served(HERE, urls["this"], folder / "this", env["this"]) as this,
        served(args.against, urls["other"], folder / "other", env["other"]) as other,
    ):
        for side, url in urls.items():
            plan = args.rollout_plan == side
            if args.feeds and same:  # every feed: feeds.py's rows, this code's migrations
                asyncio.run(prepare(url, folder / side, plan))
            else:
                assets = DESKTOP_FEED_ASSETS if args.feeds else DESKTOP_ASSETS
                size = 10 if args.feeds else args.size
                asyncio.run(fill(url, folder / side, size, assets, plan))
        medians = {}
        routes = {n: r[0] for n, r in ROUTES.items()} if same else FEED_ROUTES
        for name, path in (routes if args.feeds else {"update check": CHECK}).items():
            same_answer(this[1], other[1], path)
            print(f"{name}:", flush=True)
            ratios = rounds((this[1] + path, this[0]), (other[1] + path, other[0]), args)
            medians[name] = median(ratios)
            print(
                f"{name}: median ratio (this / other) over {args.rounds} rounds: "
                f"{medians[name]:.3f}",
                flush=True,
            )
    for name, value in medians.items():
        print(f"{name:26} {value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
