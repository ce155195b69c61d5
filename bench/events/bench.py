"""Benchmark of event delivery (docs/events.md): outbox rows committed at a target rate, a real
producer relay (`forge serve --service releases` with GATEWAY_URL), a real gateway (`forge serve
--service gateway`) and a recording plugin (recording_plugin.py, the same code as grpc_ceiling.py's
plugin; a grpc.aio server in this process), all on 127.0.0.1.

Figures:
- sustained: rows committed at `--overload` events/s for `--seconds`; the rate at which events
  reach OnEvent over the window (first to last arrival);
- latency: rows committed at `--rate` events/s for `--seconds`; commit → OnEvent p50/p99 (the
  commit time is taken in this process right after COMMIT, the arrival time by the plugin here);
- drain: `--backlog` rows committed in one transaction; events/s until the last reaches OnEvent;
- under overload: while the sustained phase is offered and until its last event arrives, the
  gateway's admin API (`GET /api/v1/admin/plugins`, which reads the delivery tables through the
  gateway's pool) and the producer's release list are asked every 0.5 s: their statuses and
  slowest answer; the duplicate OnEvent calls its events got by the end of the run (a lapsed
  lease is called again later), as a share of the events offered;
- ceiling: just before and just after the drain, `bench/events/grpc_ceiling.py` (bare OnEvent
  calls between two processes, as many in flight as the gateway's cap, 5 s) measures what one
  Python plugin can take on these CPUs in the same minutes; the drain is reported as a share of
  each (the CPU other work leaves us changes from minute to minute on a shared machine);
- through the API: releases created with `POST /api/v2/repos/bench/app/releases` (each is a
  `release.created` and a `release.published`) at `--api-rate` releases/s for `--seconds`, by up
  to 32 connections; the rate at which their events reach OnEvent, and how far delivery lagged
  behind the last 201 (a lag that grows with `--seconds` is a growing backlog).
Every event id must reach the plugin (lost = 0), or the benchmark fails. At the end: 5xx answers
of both services by route (from their /metrics), and why attempts other than the first were made
(`gateway.delivery_attempts`).

    .venv/bin/python bench/events/bench.py            # full run (~1-2 min)
    .venv/bin/python bench/events/bench.py --smoke    # ~2 s of each phase, small counts
    .venv/bin/python bench/events/bench.py --profile  # also pg_stat_statements' top statements
    .venv/bin/python bench/events/bench.py --max-in-flight 32  # the plugin's cap (PLUGINS_FILE)
    .venv/bin/python bench/events/bench.py --seconds 15 --backlog 5000  # a long overload
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import uvloop
from forge_common.embedded_pg import EmbeddedPostgres, free_port
from forge_gateway.options import DeliveryOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from forge_testing.processes import cpu_seconds
from harness import Report, add_bench_app, fail, migrate_database, parse_args, service, workspace
from observe import CEILING, Prober, grpc_ceiling, repeated_attempts, server_errors, top_statements
from recording_plugin import RecordingPlugin

SECRET = "bench-events-secret"  # noqa: S105 (a throwaway run's shared secret)
EVENT_TYPE = "release.published"
API_EVENTS = ("release.created", "release.published")  # what creating a release emits
API_TOKEN = "bench-events-token"  # noqa: S105 (a throwaway database's)
FULL = {"rate": 500, "overload": 4000, "seconds": 5.0, "backlog": 10_000, "api_rate": 1500}
SMOKE = {"rate": 100, "overload": 400, "seconds": 1.5, "backlog": 300, "api_rate": 50}
GATEWAY_CAP = DeliveryOptions().concurrency  # OnEvent calls in flight per plugin by default


INSERT = """WITH added AS (
                INSERT INTO core.outbox (id, type, source, repo_id, payload)
                SELECT id, $2, 'releases', 1, jsonb_build_object('n', n)
                  FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)
                RETURNING 1)
            SELECT pg_notify('forge_outbox', '') FROM added LIMIT 1"""


async def commit(conn: asyncpg.Connection[Any], count: int) -> tuple[list[str], float]:
    """`count` outbox rows in one transaction, as producers write them; (ids, commit time)."""
    ids = [uuid.uuid4() for _ in range(count)]
    async with conn.transaction():
        await conn.execute(INSERT, ids, EVENT_TYPE)
    return [str(i) for i in ids], time.time()


async def produce(conn: asyncpg.Connection[Any], rate: float, seconds: float) -> dict[str, float]:
    """Commit rows at `rate` events/s for `seconds`, in a transaction every 20 ms (as many
    producers' small transactions would); returns each id's commit time."""
    tick = 0.02
    committed: dict[str, float] = {}
    loop = asyncio.get_running_loop()
    start = loop.time()
    owed = 0.0
    while (elapsed := loop.time() - start) < seconds:
        owed = rate * elapsed - len(committed)
        if owed >= 1:
            ids, at = await commit(conn, int(owed))
            committed.update(dict.fromkeys(ids, at))
        await asyncio.sleep(max(0.0, tick - (loop.time() - start - elapsed)))
    return committed


async def arrived(recorder: RecordingPlugin, ids: dict[str, float], within: float) -> None:
    """Wait until every id of `ids` reached the plugin. Each look goes over the ids still
    missing only: this process is the plugin too, and a pass over every id 20 times a second
    took CPU from it while it was being measured."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    missing = list(ids)
    while missing := [i for i in missing if i not in recorder.arrivals]:
        if loop.time() > deadline:
            lost = len(missing)
            fail(f"{lost} of {len(ids)} events did not reach the plugin within {within:g} s")
        await asyncio.sleep(0.05)


async def until_count(recorder: RecordingPlugin, count: int, within: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while len(recorder.arrivals) < count:
        if loop.time() > deadline:
            fail(
                f"{count - len(recorder.arrivals)} events did not reach the plugin in {within:g} s"
            )
        await asyncio.sleep(0.05)


async def create_releases(base_url: str, rate: float, seconds: float) -> tuple[int, float, float]:
    """POST releases at up to `rate` a second for `seconds` over at most 32 connections (fewer
    when the service is slower); (releases created, start time, time of the last 201)."""
    url = f"{base_url}api/v2/repos/bench/app/releases"
    headers = {"Authorization": f"token {API_TOKEN}"}
    created, last = 0, 0.0
    slots = asyncio.Semaphore(32)

    async def one(session: aiohttp.ClientSession, n: int) -> None:
        nonlocal created, last
        try:
            async with session.post(url, json={"tag_name": f"v0.{n}.0"}, headers=headers) as resp:
                if resp.status != 201:
                    fail(f"creating a release answered {resp.status}: {await resp.text()}")
                created, last = created + 1, time.time()
        finally:
            slots.release()

    connector = aiohttp.TCPConnector(limit=32)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.time()
        tasks = []
        while (elapsed := time.time() - started) < seconds:
            if len(tasks) < rate * elapsed:
                await slots.acquire()
                tasks.append(asyncio.create_task(one(session, len(tasks))))
            else:
                await asyncio.sleep(0.002)
        await asyncio.gather(*tasks)
    return created, started, last


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


class Cpu:
    """CPU seconds of the gateway, the producer (relay), this process (plugin and inserts) and the
    database's backends, per phase: what is busy on a shared machine."""

    def __init__(self, conn: asyncpg.Connection[Any], pids: dict[str, int]) -> None:
        self.conn = conn
        self.pids = pids
        self.before: dict[str, float] = {}

    async def _now(self) -> dict[str, float]:
        backends = await self.conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        )
        here = os.times()
        return {
            **{name: cpu_seconds([pid]) for name, pid in self.pids.items()},
            "bench+plugin": here.user + here.system,
            "postgres": cpu_seconds(r["pid"] for r in backends),
        }

    async def start(self) -> None:
        self.before = await self._now()

    async def line(self, events: int) -> str:
        """CPU µs per event of each process, and its inverse, events per CPU-second: what one
        core's worth of that process would deliver, the figure least moved by the machine's load."""
        now = await self._now()
        spent = {name: max(now[name] - self.before.get(name, 0.0), 1e-9) for name in now}
        parts = [f"{name} {seconds / events * 1e6:.0f}" for name, seconds in spent.items()]
        # under a millisecond (the relay of a drain has nothing to send) is no rate
        rates = [
            f"{name} {events / seconds:,.0f}" if seconds >= 1e-3 else f"{name} -"
            for name, seconds in spent.items()
        ]
        return f"CPU µs/event: {', '.join(parts)}; events per CPU-second: {', '.join(rates)}"


async def bench(
    args: argparse.Namespace,
    conn: asyncpg.Connection[Any],
    recorder: RecordingPlugin,
    report: Report,
    cpu: Cpu,
) -> None:
    # Warm-up: the plugin has joined and the path works end to end.
    ids, _ = await commit(conn, 10)
    await arrived(recorder, dict.fromkeys(ids, 0.0), 30)
    if args.profile:
        await conn.execute("SELECT pg_stat_statements_reset()")

    # Latency at a steady rate.
    await cpu.start()
    committed = await produce(conn, args.rate, args.seconds)
    await arrived(recorder, committed, 60)
    latencies = [(recorder.arrivals[i] - at) * 1000 for i, at in committed.items()]
    report.row(
        f"latency at {args.rate}/s for {args.seconds:g} s ({len(committed)} events): commit → "
        f"OnEvent p50 {statistics.median(latencies):.0f} ms, p99 {percentile(latencies, 99):.0f} "
        f"ms, max {max(latencies):.0f} ms; {await cpu.line(len(committed))}"
    )

    # Sustained: offered more than the pipeline takes; what reaches the plugin per second, whether
    # the APIs still answer meanwhile, and (at the end of the run: a lapsed lease makes its second
    # call later) how many OnEvent calls its events got beyond one.
    await cpu.start()
    prober = Prober(
        {
            "gateway admin API": f"{args.gateway_url}api/v1/admin/plugins",
            "producer release list": f"{args.api_url}api/v2/repos/bench/app/releases",
        },
        {"Authorization": f"token {API_TOKEN}"},
    )
    prober.start()
    committed = await produce(conn, args.overload, args.seconds)
    offered = len(committed) / args.seconds
    await arrived(recorder, committed, 600)
    probed = await prober.stop()
    times = sorted(recorder.arrivals[i] for i in committed)
    first_commit = min(committed.values())
    rate = len(times) / max(times[-1] - first_commit, 1e-3)
    report.row(
        f"sustained: {len(committed)} events offered at {offered:.0f}/s; delivered at "
        f"{rate:.0f}/s (first commit to last OnEvent {times[-1] - first_commit:.1f} s); "
        f"{await cpu.line(len(committed))}"
    )
    report.row(f"under overload: APIs asked every 0.5 s: {probed}")
    overload_ids = list(committed)

    # Backlog drain: one transaction of `backlog` rows.
    if args.profile:
        await top_statements(conn, report, "the warm-up to the drain")
    # The ceiling just before and just after the drain: on a shared machine the CPU left to us
    # changes from minute to minute, and the drain is compared with both.
    in_flight = args.max_in_flight or GATEWAY_CAP
    # This process is the drain's plugin and also keeps the benchmark's books (every event id,
    # its commit and its arrival: ~80,000 by now). Its full collections walked them all, 50-95 ms
    # each, a pause the ceiling's plugin (a process of its own, holding nothing) never has; frozen,
    # they are out of the collector's view, and the two plugins are compared alike.
    gc.collect()
    gc.freeze()
    ceiling_before = await grpc_ceiling(in_flight, args.smoke)
    await cpu.start()
    ids, at = await commit(conn, args.backlog)
    await arrived(recorder, dict.fromkeys(ids, at), 300)
    last = max(recorder.arrivals[i] for i in ids)
    report.row(
        f"drain: {args.backlog} events committed at once, all delivered in {last - at:.2f} s "
        f"({args.backlog / (last - at):.0f}/s); {await cpu.line(args.backlog)}"
    )
    drain = args.backlog / (last - at)
    stored = await conn.fetchval(
        """SELECT extract(epoch FROM max(received_at)) FROM gateway.events
            WHERE id = ANY($1::uuid[])""",
        [uuid.UUID(i) for i in ids],
    )
    report.row(
        f"drain: the last event stored by the gateway {float(stored) - at:.2f} s after the commit, "
        f"the last OnEvent {last - at:.2f} s"
    )
    if args.profile:
        await top_statements(conn, report, "the drain")
    ceiling_after = await grpc_ceiling(in_flight, args.smoke)
    report.row(
        f"drain against the ceiling: bare OnEvent ({CEILING.name}, {in_flight} in flight) "
        f"{ceiling_before:.0f} calls/s just before the drain, {ceiling_after:.0f} just after; the "
        f"drain is {drain / ceiling_before:.2f} and {drain / ceiling_after:.2f} of them"
    )
    # Through the public API: the producer's own writes, outbox and relay, as in production.
    await cpu.start()
    before = len(recorder.arrivals)
    created, started, last_201 = await create_releases(args.api_url, args.api_rate, args.seconds)
    expected = before + 2 * created
    await until_count(recorder, expected, 300)
    new = sorted(recorder.arrivals.values())[before:]
    last = max(new)
    report.row(
        f"through the API: {created} releases created at {created / (last_201 - started):.0f}/s "
        f"(offered {args.api_rate:g}/s) = {2 * created} events; delivered at "
        f"{2 * created / (last - started):.0f}/s, the last {last - last_201:.2f} s after the last "
        f"201; {await cpu.line(2 * created)}"
    )
    twice = sum(recorder.calls_by_id[i] - 1 for i in overload_ids)
    report.row(
        f"under overload: duplicate OnEvent calls for the {len(overload_ids)} events offered then, "
        f"counted at the end of the run: {twice} ({twice / len(overload_ids) * 100:.2f} %)"
    )
    duplicates = recorder.calls - len(recorder.arrivals)
    offered_all = len(recorder.arrivals)
    report.row(
        f"lost 0, duplicate OnEvent calls {duplicates} of {offered_all} events "
        f"({duplicates / offered_all * 100:.2f} %); attempts other than a delivered first one: "
        f"{await repeated_attempts(conn)}"
    )
    errors = {
        "gateway": await server_errors(args.gateway_url),
        "producer": await server_errors(args.api_url),
    }
    described = "; ".join(
        f"{name} " + (", ".join(f"{n} × {key}" for key, n in found.items()) or "none")
        for name, found in errors.items()
    )
    report.row(f"5xx answers over the run: {described}")

    if args.profile:
        await top_statements(conn, report, "the API phase")


async def add_api_caller(database_url: str) -> None:
    """User `bench` with a token and its repository `app`, for the API phase."""
    conn = await asyncpg.connect(database_url)
    try:
        owner, _ = await add_bench_app(conn)
        # a site admin: the overload phase asks the gateway's admin API too
        await conn.execute("UPDATE core.accounts SET is_admin = true WHERE id = $1", owner)
        await conn.execute(
            "INSERT INTO core.access_tokens (user_id, token_sha256) VALUES ($1, $2)",
            owner,
            hashlib.sha256(API_TOKEN.encode()).digest(),
        )
    finally:
        await conn.close()


@contextlib.contextmanager
def profiled_database(folder: Path) -> Iterator[str]:
    """An embedded PostgreSQL with pg_stat_statements preloaded (restarted once to load it)."""
    pg = EmbeddedPostgres(folder / "pg")
    url = pg.start()

    async def execute(sql: str) -> None:
        c = await asyncpg.connect(url)
        try:
            await c.execute(sql)
        finally:
            await c.close()

    try:
        asyncio.run(execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"))
        pg.stop()
        pg.start()
        asyncio.run(execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
        yield url
    finally:
        pg.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, help="events/s of the latency phase")
    parser.add_argument("--overload", type=float, help="events/s offered in the sustained phase")
    parser.add_argument("--seconds", type=float, help="length of the rate phases")
    parser.add_argument("--backlog", type=int, help="events of the drain phase")
    parser.add_argument("--api-rate", type=float, help="releases/s offered through the API")
    parser.add_argument("--profile", action="store_true", help="report pg_stat_statements")
    parser.add_argument(
        "--max-in-flight", type=int, help="the plugin's max_in_flight (default: the gateway's)"
    )
    args = parse_args(parser, FULL, SMOKE)
    report = Report("bench-events", args.smoke)
    with workspace("forge-bench-events-") as (folder, default_url), contextlib.ExitStack() as stack:
        url = stack.enter_context(profiled_database(folder)) if args.profile else default_url
        migrate_database(url)
        asyncio.run(add_api_caller(url))
        run(args, url, folder, report, stack)
    report.end()
    return 0


def run(
    args: argparse.Namespace,
    database_url: str,
    folder: Path,
    report: Report,
    stack: contextlib.ExitStack,
) -> None:
    # The gateway is told the plugin's address up front (a port reserved now): the plugin runs
    # in this process's event loop, started after the gateway, which joins it when it is up.
    port = free_port()
    plugins = folder / "plugins.json"
    entry: dict[str, Any] = {"name": "recorder", "address": f"127.0.0.1:{port}"}
    if args.max_in_flight:
        entry["max_in_flight"] = args.max_in_flight
    plugins.write_text(json.dumps({"plugins": [entry]}))
    env = {"EVENTS_SECRET": SECRET, "PLUGINS_FILE": str(plugins)}
    gateway, gateway_url = stack.enter_context(service("gateway", database_url, folder / "s1", env))
    args.gateway_url = gateway_url
    producer_env = {"EVENTS_SECRET": SECRET, "GATEWAY_URL": gateway_url}
    producer, args.api_url = stack.enter_context(
        service("releases", database_url, folder / "s2", producer_env)
    )
    pids = {"gateway": gateway.pid, "producer": producer.pid}
    report.row(
        f"gateway {gateway_url}, producer relay in `forge serve --service releases`, plugin on "
        f"127.0.0.1:{port}"
    )

    async def main_async() -> None:
        recorder = RecordingPlugin(list(API_EVENTS))
        await recorder.start(port)
        conn = await asyncpg.connect(database_url)
        try:
            await bench(args, conn, recorder, report, Cpu(conn, pids))
        finally:
            await conn.close()
            await recorder.stop()

    # uvloop, as the plugin of grpc_ceiling.py: the drain is compared with it, plugin for plugin
    uvloop.run(main_async())


if __name__ == "__main__":
    sys.exit(main())
