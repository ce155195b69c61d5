"""Update-feed benchmark: each feed route against a bare aiohttp handler answering the same bytes
(bench/releases/baseline.py), on one `forge serve --service releases`, in the same run, for a
public repository of 10 releases: update.electronjs.org's shape (`/{owner}/{repo}/darwin-{arch}/
{version}`, what update-electron-app calls on every start, and its Windows RELEASES), Squirrel.
Windows RELEASES, electron-updater's latest-mac.yml, Tauri's dynamic and static answers and
Velopack's releases.{channel}.json (20 packages), the apt repository's signed InRelease and its
Packages and the dnf repository's repomd.xml (10 packages each), with
the version-2 update check as the reference row. Feeds are hot paths too: every installed app asks
on every start, so every feed is held to the update check's target (docs/decisions.md "The update
feeds"): >= 0.85 of the bare handler, side by side.

    .venv/bin/python bench/releases/feeds.py [--duration 10s] [--rounds 3] [--smoke] [--only NAME]
                                   [--rollout-plan [--evaluation-seconds S]]

`--only NAME` (repeatable) measures only the routes whose name starts with NAME (`velopack`,
`squirrel windows`): one feed re-measured after a change to it, without the others' minutes.
`--rollout-plan` runs the service with a running plan at 100 % on the newest release, evaluated
every 0.2 s, or every `--evaluation-seconds` (10: the service's default), the feeds answering the
same bytes: the feeds' figures beside a run without one.

Per route: alternating rounds (bare handler, then the service; their ratio's median and the CPU
per request), then as many side-by-side rounds (harness.side_by_side: both servers at once on one
CPU, the ratio of their work per request, which a change of the machine's speed does not move).
The side-by-side median is the figure held to the target. `--smoke` checks that every route answers
what it should, then measures two of them (SMOKE_MEASURED) for one round of 1 s with no warm-up:
the measuring code is the same for every route, and a smoke run's figures are not read.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from statistics import median

from forge_common.embedded_pg import free_port
from forge_testing.processes import wait_until_ready

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import (
    PINNED,
    ROLLOUT_PLAN_ENV,
    Report,
    WrkRun,
    add_bench_app,
    add_desktop_releases,
    add_rollout_plans,
    alternating_args,
    can_pin,
    fail,
    migrated,
    ratio,
    require_tool,
    service,
    side_by_side,
    stop,
    warm_up,
    workspace,
    wrk,
    wrk_argv,
)

HERE = Path(__file__).resolve().parent
TARGET = 0.85
FEED_ASSETS = (
    "App-{v}-arm64-mac.zip",
    "App-{v}-full.nupkg",
    "App-{v}-delta.nupkg",
    "App_{v}_aarch64.app.tar.gz",
    "App_{v}_aarch64.app.tar.gz.sig",
    "app_{v}_amd64.deb",
    "app-{v}-1.x86_64.rpm",
)
# every asset row shares one blob (sizes 1000 + index; never downloaded): the Tauri answers read
# it as the `.sig` text, so it holds printable ASCII
SHARED_BLOB = "0" * 64
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
FEEDS = "api/v2/repos/bench/app/releases/feeds"
# route name → (path, text the answer must contain, its Content-Type)
# what --smoke measures: the reference and one feed (make test's CPU goes to tests, not figures)
SMOKE_MEASURED = ("update check (reference)", "apt InRelease")
ROUTES = {
    "update check (reference)": (
        "api/v2/repos/bench/app/releases/update?version=0.0.1&platform=darwin&arch=arm64",
        "App-1.9.0-arm64-mac.zip",
        JSON,
    ),
    "electronjs darwin": ("bench/app/darwin-arm64/0.0.1", "App-1.9.0-arm64-mac.zip", JSON),
    "electronjs win32": (
        "bench/app/win32-x64/0.0.1/RELEASES",
        "App-1.9.0-full.nupkg",
        "text/plain; charset=utf-8",
    ),
    "squirrel windows": (
        f"{FEEDS}/squirrel/x64/RELEASES",
        "App-1.9.0-full.nupkg",
        "text/plain; charset=utf-8",
    ),
    "electron-updater yml": (
        f"{FEEDS}/electron/latest-mac.yml",
        "1.9.0",
        "text/yaml; charset=utf-8",
    ),
    "tauri dynamic": (f"{FEEDS}/tauri/darwin/aarch64/0.0.1", "App_1.9.0_aarch64.app.tar.gz", JSON),
    "tauri latest.json": (f"{FEEDS}/tauri/latest.json", "darwin-aarch64", JSON),
    # a Rust-based client's check: its query is replaced by these three
    "velopack": (
        "bench/app/velopack/releases.osx.json?localVersion=1.0.0&id=App"
        "&stagingId=6f0c2a1e-54f5-4a4e-9d0b-2f1d3c4b5a69",
        "App-1.9.0-delta.nupkg",
        JSON,
    ),
    # the Linux repositories' metadata (apt-get update and dnf makecache ask for these)
    "apt InRelease": ("bench/app/apt/dists/stable/InRelease", "Architectures: amd64", TEXT),
    "apt Packages": (
        "bench/app/apt/dists/stable/main/binary-amd64/Packages",
        "Version: 1.9.0",
        TEXT,
    ),
    "dnf repomd.xml": ("bench/app/rpm/stable/repodata/repomd.xml", "<revision>", "application/xml"),
}


async def prepare(url: str, storage: Path, plan: bool = False) -> None:
    """User `bench` and its public repository `app`: 10 releases, each with a macOS zip, a full
    and a delta Squirrel package (electron-builder and Squirrel default names) and a signed Tauri
    bundle."""
    async with migrated(url) as conn:
        _, repo = await add_bench_app(conn)
        await add_desktop_releases(conn, repo, 10, "", FEED_ASSETS)
        if plan:  # at 100 %: every feed answers the same bytes as without one
            await add_rollout_plans(conn, 100)
        # the Velopack feed's readings of the packages' .nuspec, as kept after its first answer
        # (the shared blob is no zip): every package is App's, on the osx channel
        await conn.execute(
            """INSERT INTO releases.velopack_packages
                      (asset_id, package_id, version, channel, notes_markdown, notes_html)
               SELECT a.id, 'App', substring(a.name FROM '^App-(.*)-(?:full|delta)[.]nupkg$'),
                      'osx', 'notes', '<p>notes</p>'
                 FROM releases.assets a JOIN releases.releases r ON r.id = a.release_id
                WHERE r.repo_id = $1 AND a.name LIKE '%.nupkg'""",
            repo,
        )
        # the Linux repositories' readings of each .deb's control and .rpm's header, as kept at
        # upload (linux/packages.py)
        await conn.execute(
            """INSERT INTO releases.linux_packages
                      (asset_id, format, name, version, arch, control, primary_xml)
               SELECT a.id, f.format, 'app', f.version, f.arch,
                      CASE WHEN f.format = 'deb' THEN
                           concat_ws(E'\\n', 'Package: app', 'Version: ' || f.version,
                                     'Architecture: amd64', 'Maintainer: bench <b@example.invalid>',
                                     'Description: the bench app', '')
                           ELSE '' END,
                      CASE WHEN f.format = 'rpm' THEN
                           '<package type="rpm"><name>app</name><arch>x86_64</arch>'
                           || '<version epoch="0" ver="' || f.version || '" rel="1"/>'
                           || '<location href="@FORGE_HREF@"/></package>' || E'\\n'
                           ELSE '' END
                 FROM releases.assets a JOIN releases.releases r ON r.id = a.release_id,
                      LATERAL (SELECT CASE WHEN a.name LIKE '%.deb' THEN 'deb' ELSE 'rpm' END
                                          AS format,
                                      substring(a.name FROM '^app[_-]([0-9.]+?)[_-]') AS version,
                                      CASE WHEN a.name LIKE '%.deb' THEN 'amd64' ELSE 'x86_64'
                                      END AS arch) f
                WHERE r.repo_id = $1 AND (a.name LIKE '%.deb' OR a.name LIKE '%.rpm')""",
            repo,
        )
        await conn.execute("ANALYZE")
    write_shared_blob(storage)


def write_shared_blob(storage: Path) -> None:
    """The bytes every asset row points at, in `storage` (the Tauri answers read them as the
    `.sig` text)."""
    blob = storage / "sha256" / SHARED_BLOB[:2] / SHARED_BLOB[2:4] / SHARED_BLOB
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(b"c2lnbmF0dXJl" * 400)


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        body: bytes = response.read()
        return body


def measure(
    url: str, pid: int, content_type: str, folder: Path, args: object
) -> tuple[list[tuple[WrkRun, WrkRun]], list[tuple[WrkRun, WrkRun]]]:
    """Alternating and side-by-side (baseline, service) rounds of one route."""
    body = fetch(url)
    body_file = folder / f"body-{len(list(folder.glob('body-*')))}"
    body_file.write_bytes(body)
    port = free_port()
    baseline = subprocess.Popen(
        [sys.executable, str(HERE / "baseline.py"), str(body_file), str(port), content_type]
    )
    duration, warmup, rounds = args.duration, args.warmup, args.rounds  # type: ignore[attr-defined]
    # smoke runs are not pinned: their figures are not read, and other benchmarks on this machine
    # pin their servers to the same CPU, which can starve a 1 s run of every request
    pin = not args.smoke  # type: ignore[attr-defined]
    try:
        base_url = f"http://127.0.0.1:{port}/{url.split('/', 3)[3]}"  # the same path and query
        asyncio.run(wait_until_ready(base_url, exit_code=baseline.poll, within=20))
        if fetch(base_url) != body:
            fail("the baseline does not answer the service's bytes")

        def run(target: str, target_pid: int, length: str) -> WrkRun:
            return wrk(target, length, cpu_of={"server": [target_pid]}, pin=pin)

        if warm_up(warmup):
            run(base_url, baseline.pid, warmup)
            run(url, pid, warmup)
        alternating = [
            (run(base_url, baseline.pid, duration), run(url, pid, duration)) for _ in range(rounds)
        ]
        together = [
            tuple(side_by_side([(base_url, baseline.pid), (url, pid)], duration, pin=pin))
            for _ in range(rounds)
        ]
    finally:
        stop(baseline)
    return alternating, [(b, s) for b, s in together]


def figures(alternating: list[tuple[WrkRun, WrkRun]], together: list[tuple[WrkRun, WrkRun]]) -> str:
    rounds = [s.rps / b.rps for b, s in alternating]
    side = [s.rps / b.rps for b, s in together]
    base_cpu = min(b.cpu_us["server"] for b, _ in alternating)
    cpu = min(s.cpu_us["server"] for _, s in alternating)
    return (
        f"service {median(s.rps for _, s in alternating):7.0f} req/s "
        f"p99 {median(s.p99_ms for _, s in alternating):6.2f} ms {cpu:5.1f} us/req | "
        f"bare {median(b.rps for b, _ in alternating):7.0f} req/s {base_cpu:5.1f} us/req | "
        f"alternating {median(rounds):.2f} (cpu {ratio(base_cpu, cpu, 'CPU per request'):.2f}) "
        f"| side by side {median(side):.2f} rounds {' '.join(f'{r:.2f}' for r in side)}"
    )


def own_options() -> argparse.Namespace:
    """`--only NAME`, `--rollout-plan` and `--evaluation-seconds`, taken off the command line."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--only", action="append", default=[])
    pre.add_argument("--rollout-plan", action="store_true")
    pre.add_argument("--evaluation-seconds", default=ROLLOUT_PLAN_ENV["ROLLOUT_EVALUATION_SECONDS"])
    known, rest = pre.parse_known_args()
    sys.argv[1:] = rest
    return known


def selected_routes(known: argparse.Namespace) -> dict[str, tuple[str, str, str]]:
    """The routes to measure: `--only NAME`, else all."""
    if not known.only:
        return ROUTES
    chosen = {
        name: route
        for name, route in ROUTES.items()
        if any(name.startswith(prefix) for prefix in known.only)
    }
    if not chosen:
        fail(f"--only {known.only} names no route of {list(ROUTES)}")
    return chosen


def main() -> int:
    options = own_options()
    routes = selected_routes(options)
    args = alternating_args(__doc__, "rounds per route (alternating, then side by side)")
    require_tool("wrk")
    report = Report("bench-feeds", args.smoke)
    report.row(
        f"{shlex.join(wrk_argv('URL', args.duration))}, {args.rounds} round(s) per route, warm-up "
        f"{args.warmup}, {PINNED.describe() if can_pin() and not args.smoke else 'not pinned'}"
    )
    worst: tuple[float, str] = (float("inf"), "")
    with workspace("forge-bench-feeds-") as (folder, db_url):
        storage = folder / "storage"
        asyncio.run(prepare(db_url, storage, options.rollout_plan))
        every = options.evaluation_seconds
        plan_env = {"ROLLOUT_EVALUATION_SECONDS": every} if options.rollout_plan else None
        if options.rollout_plan:
            report.row(
                f"a running rollout plan (100 %) on the newest release, evaluated each {every} s"
            )
        with service("releases", db_url, storage, plan_env) as (process, base):
            for name, (path, expected, _) in routes.items():
                if expected.encode() not in fetch(base + path):
                    fail(f"{name} did not answer {expected}")
            measured = {
                name: route
                for name, route in routes.items()
                if not args.smoke or name in SMOKE_MEASURED
            }
            for name, (path, _, content_type) in (measured or routes).items():
                alternating, together = measure(
                    base + path, process.pid, content_type, folder, args
                )
                report.row(f"{name:26} {figures(alternating, together)}")
                side = median(s.rps / b.rps for b, s in together)
                if not name.endswith("(reference)"):
                    worst = min(worst, (side, name))
    verdict = "met" if worst[0] >= TARGET else "NOT met"
    report.row(
        f"every feed side by side >= {TARGET:.2f} of the bare handler: worst {worst[0]:.2f} "
        f"({worst[1]}): {verdict}"
    )
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
