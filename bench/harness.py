"""What every benchmark script shares: the tools it needs, a throwaway PostgreSQL, `forge serve` as
a process, one bounded wrk run on 127.0.0.1 read strictly, and the report (full or smoke).

Scripts import it after `sys.path.insert(0, <this folder>)` (they are scripts, not a package).
A wrk run fails the benchmark, rather than yield a figure, when wrk exits non-zero, counts a
non-2xx/3xx answer or a socket error, or prints something this module cannot read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from forge_common.db import connect
from forge_common.embedded_pg import EmbeddedPostgres
from forge_common.migrations import migrate
from forge_common.service import all_migrations, installed_services
from forge_testing.processes import (
    NotReady,
    cpu_seconds,
    start_forge_service,
    wait_until_ready,
)

SMOKE_HELP = (
    "run the real code path end to end for about a second with the smallest sizes, and exit "
    "non-zero if anything fails; the figures only show that the benchmark works"
)
SMOKE_MARK = "[smoke] "
# answers each wrk thread reads in a smoke run before it stops (bench/smoke_answers.lua): the
# smokes run beside the tests in `make test`, where a second of full load per wrk run was about
# half of the CPU they used (docs/decisions.md "What make test runs")
SMOKE_ANSWERS = 100
_answers_per_thread: int | None = None  # set by parse_args for a smoke run
_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


class BenchFailed(SystemExit):
    """The benchmark could not produce a figure it can vouch for (exit status 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"bench: FAILED: {message}")


def fail(message: str) -> NoReturn:
    raise BenchFailed(message)


def require_tool(name: str) -> str:
    """The path of `name` (wrk, nginx), or a clear failure saying how to install it."""
    found = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/local/sbin/{name}") if os.access(p, os.X_OK)),
        None,
    )
    if found is None:
        fail(
            f"{name} is not installed: `make deploy-tools` installs it when run as root "
            f"(else: `sudo apt-get install -y {name}`)"
        )
    return found


def machine() -> str:
    """CPUs, CPU model, memory and load, for the report: other engineers share this machine."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, value = line.split(":", 1)
            memory[key] = int(value.split()[0]) / 1024 / 1024  # GiB
    return (
        f"{os.cpu_count()} CPUs ({model}), memory {memory.get('MemTotal', 0):.1f} GiB total "
        f"{memory.get('MemAvailable', 0):.1f} GiB available, load average {load()}"
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Report:
    """Prints a benchmark's table; in smoke mode every line says its figures are not to quote."""

    def __init__(self, name: str, smoke: bool) -> None:
        self.name = name
        self.smoke = smoke
        if smoke:
            print(f"{name}: SMOKE RUN: tiny sizes and ~1 s runs; do not quote these figures")
        print(f"{self.mark}{name}: {time.strftime('%Y-%m-%d %H:%M %Z')}, {machine()}", flush=True)

    @property
    def mark(self) -> str:
        return SMOKE_MARK if self.smoke else ""

    def row(self, text: str) -> None:
        print(f"{self.mark}{text}", flush=True)

    def end(self) -> None:
        print(f"{self.mark}{self.name}: done, load average now {load()}", flush=True)
        if self.smoke:
            print(f"{self.name}: smoke run passed (figures above are not to be quoted)", flush=True)


@dataclass(frozen=True)
class WrkRun:
    command: str
    requests: int
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_us: Mapping[str, float]  # CPU time per request of each group of processes watched


def _seconds(duration: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", duration)
    if not found:
        fail(f"not a wrk duration: {duration!r}")
    return float(found[1]) * {"": 1, "s": 1, "m": 60, "h": 3600}[found[2]]


def _read(pattern: str, out: str, what: str) -> re.Match[str]:
    found = re.search(pattern, out, re.M)
    if found is None:
        fail(f"could not read {what} in wrk's output:\n{out}")
    return found


def _latency_ms(out: str, percentile: str) -> float:
    found = _read(rf"^\s*{percentile}%\s+([\d.]+)(us|ms|s|m|h)\s*$", out, f"the {percentile}%")
    return float(found[1]) * _UNITS_MS[found[2]]


def parse_wrk(out: str, command: str) -> WrkRun:
    """The figures of `wrk --latency` output; fails on errors wrk counted or unreadable output."""
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    if non_2xx and int(non_2xx[1]):
        fail(f"{non_2xx[1]} non-2xx/3xx answers in `{command}`:\n{out}")
    errors = re.search(r"Socket errors:\s*(.*)", out)
    if errors and any(int(n) for n in re.findall(r"\d+", errors[1])):
        fail(f"socket errors ({errors[1]}) in `{command}`:\n{out}")
    requests = int(_read(r"^\s*(\d+) requests in ", out, "the request count")[1])
    rps = float(_read(r"^Requests/sec:\s+([\d.]+)\s*$", out, "Requests/sec")[1])
    if requests == 0 or rps == 0:
        fail(f"no request completed in `{command}`:\n{out}")
    return WrkRun(command, requests, rps, _latency_ms(out, "50"), _latency_ms(out, "99"), {})


def wrk_argv(
    url: str,
    duration: str,
    threads: int = 2,
    connections: int = 64,
    headers: Mapping[str, str] | None = None,
) -> list[str]:
    """The wrk command of a run; scripts print it (with a placeholder URL) above their table."""
    # wrk counts an answer slower than --timeout (2 s by default) as a socket error, which fails
    # the run: 10 s keeps that for a hung server, not for a machine loaded by others
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}", "--timeout", "10s"]
    argv.append("--latency")
    for name, value in (headers or {}).items():
        argv += ["-H", f"{name}: {value}"]
    if _answers_per_thread is None:
        return [*argv, url]
    script = Path(__file__).resolve().parent / "smoke_answers.lua"
    return [*argv, "-s", str(script), url, "--", str(_answers_per_thread)]


def wrk(
    url: str,
    duration: str,
    *,
    threads: int = 2,
    connections: int = 64,
    headers: Mapping[str, str] | None = None,
    cpu_of: Mapping[str, Sequence[int]] | None = None,
    pin: bool = False,
    prefix: Sequence[str] = (),
) -> WrkRun:
    """One bounded wrk run against 127.0.0.1, with the CPU time per request (microseconds) of each
    named group of processes in `cpu_of` (steadier than req/s when the machine is shared).

    `pin`: the processes of `cpu_of` run on one CPU and wrk on another for the run (`PINNED`), so
    the scheduler cannot put wrk's threads and the server on the same core in one round and not
    in the next; that alternation, not the code measured, made round-to-round ratios swing.
    `prefix`: what wrk runs under (`side_by_side` pins the servers itself)."""
    if not url.startswith("http://127.0.0.1:"):
        fail(f"benchmarks load 127.0.0.1 only, not {url}")
    argv = wrk_argv(url, duration, threads, connections, headers)
    command = shlex.join(argv)
    groups = dict(cpu_of or {})
    before = {name: cpu_seconds(pids) for name, pids in groups.items()}
    pin = pin and can_pin()
    restore = _pin([pid for pids in groups.values() for pid in pids]) if pin else {}
    if pin:
        prefix = PINNED.wrk_prefix
    try:
        done = subprocess.run(
            [*prefix, *argv],
            capture_output=True,
            text=True,
            check=False,
            timeout=_seconds(duration) + 60,
        )
    except subprocess.TimeoutExpired:
        fail(f"`{command}` did not finish in time")
    finally:
        _unpin(restore)
    if done.returncode != 0:
        fail(f"`{command}` exited with {done.returncode}:\n{done.stdout}{done.stderr}")
    run = parse_wrk(done.stdout, command)
    used = {name: cpu_seconds(pids) - before[name] for name, pids in groups.items()}
    return WrkRun(
        command,
        run.requests,
        run.rps,
        run.p50_ms,
        run.p99_ms,
        {name: seconds / run.requests * 1e6 for name, seconds in used.items()},
    )


@dataclass(frozen=True)
class Pinning:
    """Where `wrk(..., pin=True)` runs each side: the server on `server_cpu`, wrk on the rest."""

    server_cpu: int = 0
    wrk_cpus: str = "1"

    @property
    def wrk_prefix(self) -> list[str]:
        return ["taskset", "-c", self.wrk_cpus]

    def describe(self) -> str:
        return f"server pinned to CPU {self.server_cpu}, wrk to CPU {self.wrk_cpus} (taskset)"


PINNED = Pinning()


def side_by_side(
    targets: Sequence[tuple[str, int]], duration: str, connections: int = 32, pin: bool = True
) -> list[WrkRun]:
    """One wrk run per (url, server pid) of `targets`, all at once: the servers share one CPU and
    the wrk processes the other (when `can_pin`). While both servers are busy the scheduler gives
    them equal CPU time, so their throughput ratio is the ratio of their work per request, and a
    change in the machine's speed (this VM's rounds of the same code swing by 0.7-1.3 run after
    run) slows both alike instead of whichever side ran at the time. `pin=False`: wherever the
    scheduler puts them (smoke runs: their figures are not read, and CPU 0 may be crowded)."""
    restore = _pin([pid for _, pid in targets]) if pin and can_pin() else {}
    prefix = PINNED.wrk_prefix if restore else ()
    try:
        with ThreadPoolExecutor(len(targets)) as pool:
            runs = [
                pool.submit(
                    wrk,
                    url,
                    duration,
                    threads=1,
                    connections=connections,
                    cpu_of={"server": [pid]},
                    prefix=prefix,
                )
                for url, pid in targets
            ]
            return [run.result() for run in runs]
    finally:
        _unpin(restore)


def can_pin() -> bool:
    """Two CPUs (one for the server, one for wrk) and `taskset`; else runs are not pinned."""
    wanted = {PINNED.server_cpu, *map(int, PINNED.wrk_cpus.split(","))}
    return wanted <= os.sched_getaffinity(0) and shutil.which("taskset") is not None


def _pin(pids: Sequence[int]) -> dict[int, set[int]]:
    """Pin `pids` to `PINNED.server_cpu`; their previous CPU sets, to restore after the run."""
    previous = {}
    for pid in pids:
        # every thread: the affinity of a process is its threads' (a thread started earlier keeps
        # its own)
        for task in _threads(pid):
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                previous[task] = os.sched_getaffinity(task)
                os.sched_setaffinity(task, {PINNED.server_cpu})
    return previous


def _unpin(previous: Mapping[int, set[int]]) -> None:
    for task, cpus in previous.items():
        with contextlib.suppress(OSError):  # ended meanwhile
            os.sched_setaffinity(task, cpus)


def _threads(pid: int) -> list[int]:
    try:
        return [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return [pid]


def ratio(numerator: float, denominator: float, what: str) -> float:
    if denominator <= 0:
        fail(f"{what}: nothing measured to divide by")
    return numerator / denominator


# A PostgreSQL URL whose database each benchmark copies (CREATE DATABASE ... TEMPLATE) instead of
# starting a server of its own; bench/smoke.py sets it, with the migrations applied once.
TEMPLATE_ENV = "FORGE_BENCH_TEMPLATE"


async def execute(url: str, sql: str) -> None:
    """One statement on a connection of its own (CREATE and DROP DATABASE run outside a
    transaction)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextlib.contextmanager
def _copy_of(template_url: str) -> Iterator[str]:
    parts = urlsplit(template_url)
    template = parts.path.lstrip("/")
    name = f"forge_bench_{os.getpid()}_{time.monotonic_ns()}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    asyncio.run(execute(admin, f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        asyncio.run(execute(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextlib.contextmanager
def workspace(prefix: str, database_url: str | None = None) -> Iterator[tuple[Path, str]]:
    """A temporary folder and the URL of a database: `database_url` when given (an empty one), else
    a copy of the database $FORGE_BENCH_TEMPLATE names (bench/smoke.py), else one in a throwaway
    embedded PostgreSQL in the folder. All of it is removed afterwards (`database_url` excepted)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        if database_url:
            yield folder, database_url
        elif os.environ.get(TEMPLATE_ENV):
            with _copy_of(os.environ[TEMPLATE_ENV]) as url:
                yield folder, url
        else:
            pg = EmbeddedPostgres(folder / "pg")
            try:
                yield folder, pg.start()
            finally:
                pg.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def migrated(database_url: str) -> AsyncIterator[asyncpg.Connection[Any]]:
    """A connection to the database, every installed service's migrations applied."""
    conn = await connect(database_url)
    try:
        await migrate(conn, all_migrations(installed_services()))
        yield conn
    finally:
        await conn.close()


def migrate_database(database_url: str) -> None:
    """Apply every installed service's migrations (nothing else to load)."""

    async def run() -> None:
        async with migrated(database_url):
            pass

    asyncio.run(run())


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.contextmanager
def service(
    name: str, database_url: str, storage: Path, extra_env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`forge serve --service NAME` on 127.0.0.1, ready; its process and base URL. Stopped after.

    Started again, once, on another port when it exits before it is ready: on a shared machine
    another process can take the free port it was given before it binds it."""
    for attempt in (1, 2):
        process, url = start_forge_service(name, database_url, storage, extra_env)
        try:
            try:
                asyncio.run(wait_until_ready(url + "readyz", exit_code=process.poll, within=30))
            except NotReady:
                if process.poll() is None:  # neither exited nor ready in time
                    raise
            time.sleep(0.3)  # another process on its port may have answered while it exits
            if process.poll() is None:
                yield process, url
                return
        finally:
            stop(process)
        print(
            f"bench: forge serve --service {name} exited with status {process.returncode} before "
            f"it was ready ({'starting it again on another port' if attempt == 1 else 'twice'})",
            flush=True,
        )
    fail(f"forge serve --service {name} did not start")


def parse_args(
    parser: argparse.ArgumentParser, full: Mapping[str, Any], smoke: Mapping[str, Any]
) -> argparse.Namespace:
    """Parse the command line with --smoke added; the `smoke` defaults replace the `full` ones when
    it is given (options given explicitly still win)."""
    global _answers_per_thread
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    known, _ = parser.parse_known_args()
    parser.set_defaults(**(smoke if known.smoke else full))
    _answers_per_thread = SMOKE_ANSWERS if known.smoke else None
    return parser.parse_args()


ALTERNATING_FULL = {"duration": "10s", "warmup": "2s", "rounds": 3}
ALTERNATING_SMOKE = {"duration": "1s", "warmup": "0", "rounds": 1}


def alternating_args(doc: str | None, rounds_help: str) -> argparse.Namespace:
    """The command line of a benchmark that alternates two sides in one run (a baseline and the
    thing measured): --duration, --warmup, --rounds and --smoke (one round of 1 s, no warm-up)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--duration", help="length of each wrk run")
    parser.add_argument("--warmup", help="length of the warm-up run of each side (0: none)")
    parser.add_argument("--rounds", type=int, help=rounds_help)
    return parse_args(parser, ALTERNATING_FULL, ALTERNATING_SMOKE)


def comparison(runs: Sequence[tuple[WrkRun, WrkRun]], baseline: str, measured: str) -> str:
    """The report row of alternating (baseline, measured) rounds: each side's median req/s, p99 and
    CPU per request (server), the median of the per-round throughput ratios measured/baseline and
    the CPU ratio, against the usual target of 0.8."""
    ratios = [m.rps / b.rps for b, m in runs]
    base_cpu = min(b.cpu_us["server"] for b, _ in runs)
    measured_cpu = min(m.cpu_us["server"] for _, m in runs)
    return (
        f"{baseline} {median(b.rps for b, _ in runs):7.0f} req/s p99 "
        f"{median(b.p99_ms for b, _ in runs):6.2f} ms {base_cpu:5.1f} us/req | "
        f"{measured} {median(m.rps for _, m in runs):7.0f} req/s p99 "
        f"{median(m.p99_ms for _, m in runs):6.2f} ms {measured_cpu:5.1f} us/req | "
        f"ratio {median(ratios):.2f} "
        f"(cpu {ratio(base_cpu, measured_cpu, 'CPU per request'):.2f}) "
        f"rounds {' '.join(f'{r:.2f}' for r in ratios)} (target >= 0.80)"
    )


def warm_up(duration: str) -> bool:
    """Whether a warm-up of `duration` is wanted ("0" skips it, as smoke runs do)."""
    return _seconds(duration) > 0


# A desktop app's assets on every release (bench-pages, bench-compat)
DESKTOP_ASSETS = (
    "App-{v}-arm64.zip",
    "App-{v}-x64.zip",
    "App-Setup-{v}-x64.exe",
    "App-{v}-x86_64.AppImage",
    "App-{v}-full.nupkg",
    "RELEASES",
)


async def add_bench_app(
    conn: asyncpg.Connection, *, private: bool = False, description: str = ""
) -> tuple[int, int]:
    """User `bench` and its repository `app` (the benchmarks' desktop app): (owner id, repo id)."""
    owner: int = await conn.fetchval(
        "INSERT INTO core.accounts (kind, name) VALUES ('user', 'bench') RETURNING id"
    )
    repo: int = await conn.fetchval(
        "INSERT INTO core.repositories (owner_id, name, private, description)"
        " VALUES ($1, 'app', $2, $3) RETURNING id",
        owner,
        private,
        description,
    )
    return owner, repo


async def add_desktop_releases(
    conn: asyncpg.Connection,
    repo_id: int,
    count: int,
    note: str,
    assets: tuple[str, ...] = DESKTOP_ASSETS,
) -> None:
    """Releases v1.0.0 ... v1.<count-1>.0 of `repo_id`, a day apart from 2020-01-01, each with
    `assets` (`{v}` is the version; sizes only: the files are never downloaded)."""
    start = datetime(2020, 1, 1, tzinfo=UTC)
    await conn.copy_records_to_table(
        "releases",
        schema_name="releases",
        columns=["repo_id", "tag", "title", "note", "created_at"],
        records=[
            (repo_id, f"v1.{i}.0", f"1.{i}.0", note, start + timedelta(days=i))
            for i in range(count)
        ],
    )
    rows = await conn.fetch("SELECT id, title FROM releases.releases WHERE repo_id = $1", repo_id)
    await conn.copy_records_to_table(
        "assets",
        schema_name="releases",
        columns=["release_id", "name", "size", "sha1", "sha256", "sha512"],
        records=[
            (row["id"], name.format(v=row["title"]), 1000 + k, "0" * 40, "0" * 64, "0" * 128)
            for row in rows
            for k, name in enumerate(assets)
        ],
    )


# --- a running rollout plan (`--rollout-plan` of bench/releases/bench.py and feeds.py) ---

_PLAN_GATES = (
    '{"uptake": {"enabled": true, "min_share": 0.5, "window_seconds": 0, "min_checks": 20},'
    ' "external": {"enabled": true, "max_drop": 0.01, "min_sessions": 100}}'
)
# the releases service evaluates the plans this often (docs/rollouts.md), 50 times its default
ROLLOUT_PLAN_ENV = {"ROLLOUT_EVALUATION_SECONDS": "0.2"}


async def add_rollout_plans(conn: Any, percent: int) -> None:
    """A running rollout plan at `percent` on the newest release of every repository: one step
    held a day, both gates on, so each evaluation reads the gates' figures and moves nothing."""
    steps = f'[{{"percent": {percent}, "hold_seconds": 86400, "min_installs": 0}}]'
    await conn.execute(
        f"""WITH newest AS (
                SELECT DISTINCT ON (repo_id) id, repo_id FROM releases.releases
                 ORDER BY repo_id, created_at DESC)
            INSERT INTO releases.rollout_plans
                   (release_id, repo_id, steps, gates, on_failure, state, step, due_at, summary)
            SELECT id, repo_id, '{steps}', '{_PLAN_GATES}', 'halt', 'running', 0, now(),
                   'bench' FROM newest"""
    )
    await conn.execute(
        "UPDATE releases.releases SET rollout = $1 WHERE id IN "
        "(SELECT release_id FROM releases.rollout_plans)",
        percent,
    )
