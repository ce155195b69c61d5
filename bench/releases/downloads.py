"""Download throughput: a 10 MiB asset through nginx with X-Accel-Redirect, and sent by
the service directly (the kernel's sendfile, downloads/zerocopy.py), each as a ratio of nginx
serving the same file statically, in the same run, rounds alternating (targets: both >= 0.8).

    make bench-downloads   (or: .venv/bin/python bench/releases/downloads.py [--size-mib 10]
                                 [--seconds 5] [--rounds 3] [--connections 8] [--smoke])

Starts, on 127.0.0.1: `forge serve --service releases` twice on the same folder storage and
database (one with STORAGE_ACCEL_PREFIX, behind nginx from deploy/nginx; one without, loaded
directly) and nginx with one more server block serving the storage folder as static files.
`--smoke` uses a 64 KiB file and one round of 1 s: it checks the benchmark works.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from forge_common.config import Settings
from forge_common.embedded_pg import free_port
from forge_common.service import installed_services
from forge_common.world import load_world
from forge_testing.nginx import NginxFailed, running_nginx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import Report, fail, migrated, parse_args, require_tool, service, workspace, wrk

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
ACCEL = "/_forge_storage/"
PATH = "/bench/app/releases/download/v1.0.0/App.zip"


def world(size: int) -> dict[str, object]:
    release = {"tag": "v1.0.0", "assets": [{"name": "App.zip", "size": size}]}
    return {
        "users": [{"name": "bench"}],
        "repos": [{"owner": "bench", "name": "app", "releases": [release]}],
    }


async def prepare(database_url: str, storage: Path, size: int) -> str:
    """Load the world; the stored file's path below the storage folder."""
    async with migrated(database_url) as conn:
        settings = Settings(database_url=database_url, storage_path=storage)
        await load_world(conn, world(size), list(installed_services().values()), settings)
        digest: str = await conn.fetchval("SELECT sha256 FROM releases.assets")
    return f"sha256/{digest[:2]}/{digest[2:4]}/{digest}"


@contextlib.contextmanager
def nginx(releases: str, storage: Path) -> Iterator[tuple[int, int]]:
    """nginx from the deploy template in front of `releases`, plus a static server of the storage
    folder; (proxy port, static port)."""
    binary = require_tool("nginx")
    static_port = free_port()
    values = {
        "RELEASES_UPSTREAM": releases.removeprefix("http://").rstrip("/"),
        "ORGS_UPSTREAM": "127.0.0.1:1",
        "GATEWAY_UPSTREAM": "127.0.0.1:2",
        "STORAGE_ROOT": str(storage),
    }
    static = (
        "\n# bench baseline: the same files, served statically\n"
        f"server {{\n    listen 127.0.0.1:{static_port};\n"
        f"    location /static/ {{ alias {storage}/; }}\n}}\n"
    )
    try:
        with running_nginx(binary, values, static) as proxy_port:
            yield proxy_port, static_port
    except NginxFailed as error:
        fail(f"nginx did not start: {error}")


def check(url: str, size: int, header: str | None = None) -> None:
    with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 - 127.0.0.1 only
        body = resp.read()
        if len(body) != size:
            fail(f"{url} sent {len(body)} bytes, not {size}")
        if header and header not in resp.headers:
            fail(f"{url} lacks {header}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size-mib", type=float, help="size of the asset")
    parser.add_argument("--seconds", type=int, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, help="rounds of the three paths, alternating")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections")
    args = parse_args(
        parser,
        {"size_mib": 10, "seconds": 5, "rounds": 3},
        {"size_mib": 1 / 16, "seconds": 1, "rounds": 1},
    )
    size = int(args.size_mib * MIB)
    report = Report("downloads", args.smoke)
    with workspace("forge-bench-downloads-") as (folder, url):
        folder.chmod(0o755)  # nginx's workers (another user) read the storage folder
        storage = folder / "storage"
        blob = asyncio.run(prepare(url, storage, size))
        accel_env = {"STORAGE_ACCEL_PREFIX": ACCEL}
        with (
            service("releases", url, storage, accel_env) as (accel_process, accel_url),
            service("releases", url, storage) as (direct_process, direct_url),
            nginx(accel_url, storage) as (proxy_port, static_port),
        ):
            paths = {
                "nginx static": f"http://127.0.0.1:{static_port}/static/{blob}",
                "nginx X-Accel-Redirect": f"http://127.0.0.1:{proxy_port}{PATH}",
                "service direct (sendfile)": f"{direct_url.rstrip('/')}{PATH}",
            }
            for target in paths.values():
                check(target, size)
            report.row(
                f"{size / MIB:g} MiB asset; wrk -t2 -c{args.connections} -d{args.seconds}s, "
                f"{args.rounds} round(s) alternating; GB/s = 1e9 bytes/s"
            )
            rates: dict[str, list[float]] = {name: [] for name in paths}
            cpu: dict[str, list[float]] = {name: [] for name in paths}
            for _ in range(args.rounds):
                for name, target in paths.items():
                    run = wrk(
                        target,
                        f"{args.seconds}s",
                        connections=args.connections,
                        threads=2,
                        cpu_of={"service": [accel_process.pid, direct_process.pid]},
                    )
                    rates[name].append(run.rps)
                    cpu[name].append(run.cpu_us["service"])
            best = {name: statistics.median(values) for name, values in rates.items()}
            for name, rps in best.items():
                report.row(
                    f"{name:28} {rps:9.0f} req/s  {rps * size / 1e9:6.2f} GB/s  "
                    f"service CPU {statistics.median(cpu[name]) / 1000:.1f} ms/request"
                )
            static = best["nginx static"]
            accel = best["nginx X-Accel-Redirect"] / static
            direct = best["service direct (sendfile)"] / static
            report.row(
                f"RESULT accel_vs_static={accel:.2f} direct_vs_static={direct:.2f} "
                f"(targets >= 0.8; machine load average at the end in the last line)"
            )
    report.end()


if __name__ == "__main__":
    main()
