"""The micro-cache (docs/operations.md "Micro-cache") against nginx serving the same bytes
statically: wrk on the anonymous update check through the forge proxy (answered from the
micro-cache, one request a second reaching the service) and on a second nginx with the same
worker count serving the body as a file, alternating, in the same run. Target: at least 0.7.

    make bench-micro-cache   (or: .venv/bin/python bench/proxy/micro_cache.py [--seconds N]
                                                                   [--rounds N] [--smoke])

The stack is the end-to-end one (tests-e2e/conftest.py, through `running_stack` of
bench/proxy/bench.py) with tests-e2e/test_micro_cache.py's world. `--smoke` runs one round of
1 s and applies no target.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from forge_common.embedded_pg import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/proxy/bench.py: the stack
from harness import Report, fail, parse_args, require_tool, stop, wrk, wrk_argv

import bench as bench_proxy

HERE = Path(__file__).resolve().parents[2] / "tests-e2e"  # the end-to-end stack and worlds
TARGET = 0.7

STATIC_CONF = """
worker_processes auto;
pid nginx.pid;
error_log logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    sendfile on;
    tcp_nopush on;
    access_log logs/access.log combined buffer=64k flush=1s;
    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            root {root};
            default_type application/json;
            try_files /body.json =404;
        }}
    }}
}}
"""


def fetch(url: str) -> tuple[bytes, str]:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        return response.read(), response.headers.get("X-Cache-Status", "")


def static_nginx(body: bytes, prefix: Path) -> tuple[subprocess.Popen[bytes], str]:
    """nginx with the default worker count (`auto`, as deploy/nginx/nginx.conf) serving `body`
    as a file at every address."""
    prefix.chmod(0o755)
    for folder in ("logs", "temp", "static"):
        (prefix / folder).mkdir()
    (prefix / "static" / "body.json").write_bytes(body)
    port = free_port()
    (prefix / "nginx.conf").write_text(STATIC_CONF.format(port=port, root=prefix / "static"))
    nginx = require_tool("nginx")
    process = subprocess.Popen(
        [nginx, "-p", f"{prefix}/", "-e", "logs/error.log", "-c", "nginx.conf", "-g", "daemon off;"]
    )
    url = f"http://127.0.0.1:{port}/api/v2/repos/acme/app/releases/update"
    deadline = time.monotonic() + 10
    while True:
        try:
            fetch(url)
            return process, url
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                stop(process)
                fail("the static nginx did not start")
            time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=int, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, help="static/micro-cache pairs")
    args = parse_args(parser, {"seconds": 8, "rounds": 3}, {"seconds": 1, "rounds": 1})
    require_tool("wrk")
    require_tool("nginx")
    stacks = bench_proxy._module("forge_e2e_conftest", HERE / "conftest.py")
    world = bench_proxy._module("forge_e2e_micro_cache", HERE / "test_micro_cache.py").WORLD
    path = "/api/v2/repos/acme/app/releases/update?version=0.1.0&platform=linux&arch=x64"
    report = Report("bench-micro-cache", args.smoke)
    with bench_proxy.running_stack(stacks, world) as stack:
        cached_url = f"{stack.base_url.rstrip('/')}{path}"
        body, _ = fetch(cached_url)
        if fetch(cached_url)[1] != "HIT":
            fail("the second anonymous update check was not answered from the micro-cache")
        prefix = Path(tempfile.mkdtemp(prefix="forge-bench-static-"))
        static, static_url = static_nginx(body, prefix)
        try:
            if fetch(static_url)[0] != body:
                fail("the static nginx does not answer the same bytes")
            duration = f"{args.seconds}s"
            report.row(f"{shlex.join(wrk_argv('URL', duration))}, {args.rounds} round(s)")
            ratios = []
            for _ in range(args.rounds):
                plain = wrk(static_url, duration)
                cached = wrk(cached_url, duration)
                ratios.append(cached.rps / plain.rps)
                report.row(
                    f"static nginx {plain.rps:.0f} req/s (p99 {plain.p99_ms:.2f} ms) "
                    f"| micro-cache {cached.rps:.0f} req/s (p99 {cached.p99_ms:.2f} ms) "
                    f"| ratio {ratios[-1]:.2f}"
                )
        finally:
            stop(static)
            shutil.rmtree(prefix, ignore_errors=True)
    found = statistics.median(ratios)
    verdict = "not applied to a smoke run" if args.smoke else f">= {TARGET}"
    report.row(f"micro-cache / static nginx, median ratio {found:.2f} (target {verdict})")
    report.end()
    return 0 if args.smoke or found >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
