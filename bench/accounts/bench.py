"""Accounts benchmark (docs/accounts.md): what a browser sign-in costs on this machine, and what a
session costs a page.

    .venv/bin/python bench/accounts/bench.py [--duration 10s] [--rounds 3] [--sign-ins 40]
                                             [--smoke]

1. argon2id: one hash and one verification with forge_common.accounts.passwords' parameters
   (RFC 9106's low-memory profile: t=3, m=64 MiB, p=4), timed in this process, median of
   `--sign-ins`.
2. Sign-in end to end: `POST /user/login` (form, CSRF token, throttle, argon2 verification, a new
   session) against `forge serve --service orgs`, one browser after another and then two at once
   (the machine's two cores): median and p99 latency, sign-ins per second.
3. A signed-in page against the anonymous one: the release page of a public repository
   (`/bench/app/releases/tag/v1.19.0`, the same content to both) from `forge serve --service
   releases`, with wrk, rounds alternating anonymous and signed-in (a session cookie); the
   ratio signed-in/anonymous of the service's CPU per request (the target) and of throughput in
   the same run. A session costs one query (find it, restart its idle clock at most once a
   minute) and the viewer's access facts one more.

`--smoke` runs 1 s rounds, 2 sign-ins, no warm-up, and applies no target.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from forge_common.accounts import passwords
from forge_common.accounts.sessions import start_session
from forge_common.config import Settings
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

RELEASES = 20
PAGE = f"bench/app/releases/tag/v1.{RELEASES - 1}.0"
PASSWORD = "bench-sign-in-password"  # noqa: S105 (a throwaway database's)
FULL = {"duration": "10s", "warmup": "2s", "rounds": 3, "sign_ins": 40, "connections": 16}
SMOKE = {"duration": "1s", "warmup": "0", "rounds": 1, "sign_ins": 2, "connections": 2}
# signed-in/anonymous, in the service's CPU per request (steadier than req/s on a shared machine):
# a signed-in view runs two queries (the session, the viewer's access) that an anonymous view of
# a cached public repository does not
TARGET = 0.6
_CSRF = re.compile(r'name="_csrf" value="([^"]+)"')


async def prepare(url: str) -> str:
    """The bench app with its releases, user `bench` with a password; a session's cookie value."""
    async with migrated(url) as conn:
        owner, repo = await add_bench_app(conn, description="A desktop app")
        await add_desktop_releases(conn, repo, RELEASES, "Notes")
        await conn.execute(
            "UPDATE core.accounts SET password_hash = $2 WHERE id = $1",
            owner,
            passwords.hash_password_sync(PASSWORD),
        )
        secret = await start_session(conn, Settings(database_url=url), owner)
        await conn.execute("ANALYZE")
    return secret


def argon2_cost(count: int) -> tuple[float, float]:
    """Median milliseconds of one hash and of one verification."""
    hashes, verifies = [], []
    stored = passwords.hash_password_sync(PASSWORD)
    for _ in range(count):
        started = time.perf_counter()
        passwords.hash_password_sync(PASSWORD)
        hashes.append(time.perf_counter() - started)
        started = time.perf_counter()
        if not passwords._verify(stored, PASSWORD):
            fail("argon2 verification failed")
        verifies.append(time.perf_counter() - started)
    return statistics.median(hashes) * 1e3, statistics.median(verifies) * 1e3


async def _one_sign_in(base: str) -> float:
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as session:
        async with session.get(base + "user/login") as form:
            found = _CSRF.search(await form.text())
        if found is None:
            fail("the sign-in form has no CSRF token")
        data = {"_csrf": found.group(1), "user_name": "bench", "password": PASSWORD}
        started = time.perf_counter()
        async with session.post(
            base + "user/login",
            data=data,
            headers={"Origin": base.rstrip("/")},
            allow_redirects=False,
        ) as reply:
            if reply.status != 303:
                fail(f"sign-in answered {reply.status}: {(await reply.text())[:300]}")
        return time.perf_counter() - started


async def sign_ins(base: str, count: int, parallel: int) -> tuple[float, float, float]:
    """(median ms, p99 ms, sign-ins per second) of `count` sign-ins, `parallel` at a time."""
    latencies: list[float] = []
    started = time.perf_counter()
    for _ in range(max(1, count // parallel)):
        latencies += await asyncio.gather(*(_one_sign_in(base) for _ in range(parallel)))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, len(ordered) / elapsed


def check_signed_in(page: str, cookie: dict[str, str]) -> None:
    """Fail unless the cookie signs the page in (its header names the user) and anonymous is not."""
    request = urllib.request.Request(page, headers=cookie)  # noqa: S310 - loopback
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
        body = response.read()
    if b'class="who" href="/bench">bench</a>' not in body:
        fail(f"the session did not sign the page in: {body[:400]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up runs (0: none)")
    parser.add_argument("--rounds", type=int, help="alternating runs of the page comparison")
    parser.add_argument("--connections", type=int, help="wrk -c of every run")
    parser.add_argument("--sign-ins", type=int, help="sign-ins (and argon2 rounds) measured")
    args = parse_args(parser, FULL, SMOKE)
    require_tool("wrk")
    report = Report("bench-accounts", args.smoke)
    hash_ms, verify_ms = argon2_cost(args.sign_ins)
    report.row(
        f"argon2id (t=3, m=64 MiB, p=4): hash {hash_ms:.1f} ms, verify {verify_ms:.1f} ms "
        f"(median of {args.sign_ins}, in one process)"
    )
    with workspace("forge-bench-accounts-") as (folder, db_url):
        secret = asyncio.run(prepare(db_url))
        with service("orgs", db_url, folder / "orgs") as (_, orgs_base):
            for parallel in (1, 2):
                median_ms, p99_ms, rate = asyncio.run(sign_ins(orgs_base, args.sign_ins, parallel))
                report.row(
                    f"sign-in POST /user/login, {parallel} at a time: median {median_ms:.1f} ms, "
                    f"p99 {p99_ms:.1f} ms, {rate:.1f} sign-ins/s"
                )
        with service("releases", db_url, folder / "releases") as (releases, base):
            page = base + PAGE
            cookie = {"Cookie": f"forge_session={secret}"}

            check_signed_in(page, cookie)

            def run(headers: dict[str, str] | None, duration: str) -> WrkRun:
                return wrk(
                    page,
                    duration,
                    threads=1,
                    connections=args.connections,
                    headers=headers,
                    cpu_of={"server": [releases.pid]},
                )

            if warm_up(args.warmup):
                run(None, args.warmup)
                run(cookie, args.warmup)
            runs = [
                (run(None, args.duration), run(cookie, args.duration)) for _ in range(args.rounds)
            ]
    ratios = [m.rps / b.rps for b, m in runs]
    cpu_ratio = min(b.cpu_us["server"] for b, _ in runs) / min(m.cpu_us["server"] for _, m in runs)
    for name, side in (("anonymous", 0), ("signed-in", 1)):
        report.row(
            f"release page c={args.connections} {name:9}: "
            f"{statistics.median(r[side].rps for r in runs):7.0f} req/s  "
            f"p99 {statistics.median(r[side].p99_ms for r in runs):6.2f} ms  "
            f"{min(r[side].cpu_us['server'] for r in runs):6.0f} us/req"
        )
    report.row(f"  ({runs[0][1].command.replace(secret, 'SESSION')})")
    verdict = "not applied to a smoke run" if args.smoke else "applied"
    report.row(
        f"signed-in/anonymous: CPU per request {cpu_ratio:.2f} "
        f"(target >= {TARGET:.2f}: {verdict}), throughput {statistics.median(ratios):.2f} "
        f"(rounds {' '.join(f'{r:.2f}' for r in ratios)})"
    )
    report.end()
    return 0 if args.smoke or cpu_ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
