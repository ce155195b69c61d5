"""The micro-cache (docs/operations.md "Micro-cache") against nginx serving the same bytes
statically: wrk on the anonymous update check through the forge proxy (answered from the
micro-cache, one request a second reaching the service) and on a second nginx with the same
worker count serving the body as a file, alternating, in the same run. Target: at least 0.7.

    make bench-micro-cache   (or: .venv/bin/python bench/proxy/micro_cache.py [--seconds N]
                                                                   [--rounds N] [--smoke])

The stack is the end-to-end one (tests-e2e/conftest.py, through `running_stack` of
bench/proxy/bench.py) with tests-e2e/test_micro_cache.py's world. `--smoke` runs one round of
1 s and applies no target.

Refresh (docs/operations.md "Micro-cache"): each round also runs wrk on the same check sent to
the releases service directly (`service`), and counts, from nginx's access log, the requests of
the cached runs that nginx passed to the service, per whole second. Targets: the p99 through
nginx no worse than the service's own (median over the rounds), and one request a second per
address reaching the service, whatever the 64 connections do.

Insights (docs/insights.md "Behind the micro-cache"): nginx logs every check it answers from the
cache, so the figures above are with that log on. After the rounds, the checks counted by the
insights API (what the service counted itself, plus nginx's log of its cached answers) are
compared with the checks nginx answered (its access log): the accuracy, target exactly 1. wrk's
own count of completed requests is shown too; it can be lower by the requests in flight when it
stops (answered by nginx, and counted, but never read by wrk). The cost of that log: each round
also loads a second forge proxy rendered from the same template without the log line, in front
of the same services (`with log / without`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from forge_common.embedded_pg import free_port
from forge_testing.nginx import load_renderer

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


def counted(base_url: str, token: str) -> int:
    """Update checks from version 0.1.0 counted in the last 30 days (the insights API, as an
    admin): the proxy without the log checks from 0.1.1 and the service alone from 0.1.2, so
    their requests are not in this."""
    request = urllib.request.Request(  # noqa: S310 - loopback
        f"{base_url}api/v2/repos/acme/app/insights", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - loopback
        series = json.loads(response.read())["checks"]["series"]
    return sum(s["total"] for s in series if s["value"] == "0.1.0")


def settled(read: Callable[[], int], at_least: int) -> int:
    """`read()` once it reaches `at_least` and has stopped moving (nginx writes its logs every
    second, the service reads the cached answers' log every 2 s)."""
    last, still_since = -1, time.monotonic()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = read()
        if now != last:
            last, still_since = now, time.monotonic()
        elif now >= at_least and time.monotonic() - still_since > 3:
            break
        time.sleep(0.25)
    return last


def answered(access_log: Path, path: str) -> int:
    """The checks of `path` nginx answered (200), from its access log."""
    needle = f'"GET {path} HTTP/1.1" 200 '.encode()
    return access_log.read_bytes().count(needle)


@contextlib.contextmanager
def proxy_without_insights_log(ports: dict[str, int]) -> Iterator[int]:
    """A second forge nginx from the same template, minus the insights log, on a free port."""
    values = {
        "RELEASES_UPSTREAM": f"127.0.0.1:{ports['releases']}",
        "ORGS_UPSTREAM": f"127.0.0.1:{ports['orgs']}",
        "GATEWAY_UPSTREAM": f"127.0.0.1:{ports['gateway']}",
    }
    port = free_port()
    prefix = Path(tempfile.mkdtemp(prefix="forge-bench-nolog-"))
    prefix.chmod(0o755)
    load_renderer().write_prefix(prefix, {**values, "NGINX_LISTEN": f"127.0.0.1:{port}"})
    conf = prefix / "forge.conf"
    kept = [line for line in conf.read_text().splitlines() if "forge_insights buffer" not in line]
    conf.write_text("\n".join(kept) + "\n")
    nginx = require_tool("nginx")
    argv = [nginx, "-p", f"{prefix}/", "-e", "logs/error.log", "-c", "nginx.conf"]
    process = subprocess.Popen([*argv, "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except urllib.error.HTTPError:
                break  # it answers (404 for /)
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    fail("the proxy without the insights log did not start")
                time.sleep(0.05)
        yield port
    finally:
        stop(process)
        shutil.rmtree(prefix, ignore_errors=True)


# the access log (log_format forge): the second a request ended and whether it reached the
# service (`urt`, "-" for an answer from the cache)
_LOG_LINE = re.compile(
    r'\[(?P<at>[^\]]+)\] "GET (?P<uri>\S+) [^"]*" \d+ \d+ rt=\S+ urt=(?P<urt>\S+)'
)


def reaching_the_service(
    access_log: Path, path: str, windows: list[tuple[float, float]]
) -> list[int]:
    """Per whole second inside one of `windows` (unix times of the cached runs), how many requests
    for `path` nginx passed to the service."""
    per_second: Counter[int] = Counter()
    for line in access_log.read_text().splitlines():
        match = _LOG_LINE.search(line)
        if match is None or match["uri"] != path or match["urt"] == "-":
            continue
        second = int(datetime.fromisoformat(match["at"]).timestamp())
        if any(start <= second and second + 1 <= end for start, end in windows):
            per_second[second] += 1
    seconds = [s for start, end in windows for s in range(int(start) + 1, int(end))]
    return [per_second[s] for s in seconds]


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
    micro_cache_test = bench_proxy._module("forge_e2e_micro_cache", HERE / "test_micro_cache.py")
    world = micro_cache_test.WORLD
    path = "/api/v2/repos/acme/app/releases/update?version=0.1.0&platform=linux&arch=x64"
    report = Report("bench-micro-cache", args.smoke)
    with bench_proxy.running_stack(stacks, world) as stack:
        cached_url = f"{stack.base_url.rstrip('/')}{path}"
        body, _ = fetch(cached_url)
        if fetch(cached_url)[1] != "HIT":
            fail("the second anonymous update check was not answered from the micro-cache")
        prefix = Path(tempfile.mkdtemp(prefix="forge-bench-static-"))
        static, static_url = static_nginx(body, prefix)
        no_log = contextlib.ExitStack()
        try:
            if fetch(static_url)[0] != body:
                fail("the static nginx does not answer the same bytes")
            duration = f"{args.seconds}s"
            report.row(f"{shlex.join(wrk_argv('URL', duration))}, {args.rounds} round(s)")
            ratios, log_costs = [], []
            bare_port = no_log.enter_context(proxy_without_insights_log(stack.ports))
            bare_url = f"http://127.0.0.1:{bare_port}{path.replace('0.1.0', '0.1.1')}"
            fetch(bare_url)
            token = micro_cache_test.TOKEN
            access_log = next(p.access_log for p in stack.processes if p.access_log)
            # the two checks above, counted (the first by the service, the second from the log)
            before = settled(lambda: counted(stack.base_url, token), 2)
            answered_before = settled(lambda: answered(access_log, path), 2)
            sent = 0
            # another version, as the proxy without the log: the insights count above stays
            # the proxy's own
            direct = path.replace("0.1.0", "0.1.2")
            service_url = f"http://127.0.0.1:{stack.ports['releases']}{direct}"
            windows: list[tuple[float, float]] = []
            p99s: list[tuple[float, float]] = []  # (through nginx, the service's own)
            for _ in range(args.rounds):
                plain = wrk(static_url, duration)
                began = time.time()
                cached = wrk(cached_url, duration)
                windows.append((began, time.time()))
                sent += cached.requests
                bare = wrk(bare_url, duration)
                own = wrk(service_url, duration)
                ratios.append(cached.rps / plain.rps)
                log_costs.append(cached.rps / bare.rps)
                p99s.append((cached.p99_ms, own.p99_ms))
                report.row(
                    f"static nginx {plain.rps:.0f} req/s (p99 {plain.p99_ms:.2f} ms) "
                    f"| micro-cache {cached.rps:.0f} req/s (p99 {cached.p99_ms:.2f} ms) "
                    f"| ratio {ratios[-1]:.2f} | without the insights log {bare.rps:.0f} req/s, "
                    f"with / without {log_costs[-1]:.2f} | the service alone {own.rps:.0f} req/s "
                    f"(p99 {own.p99_ms:.2f} ms)"
                )
            no_log.close()
            by_nginx = settled(lambda: answered(access_log, path), answered_before + sent)
            by_nginx -= answered_before
            got = settled(lambda: counted(stack.base_url, token), before + by_nginx) - before
            found_accuracy = got / by_nginx
            report.row(
                f"insights: nginx answered {by_nginx} checks ({sent} completed for wrk), "
                f"counted {got}: accuracy {found_accuracy:.6f} (target 1)"
            )
            reached = reaching_the_service(access_log, path, windows)
        finally:
            no_log.close()
            stop(static)
            shutil.rmtree(prefix, ignore_errors=True)
    found = statistics.median(ratios)
    verdict = "not applied to a smoke run" if args.smoke else f">= {TARGET}"
    report.row(f"micro-cache / static nginx, median ratio {found:.2f} (target {verdict})")
    report.row(
        f"micro-cache with / without the insights log, median {statistics.median(log_costs):.2f}"
    )
    through = statistics.median(p for p, _ in p99s)
    alone = statistics.median(own for _, own in p99s)
    report.row(
        f"p99 through nginx {through:.2f} ms, the service's own {alone:.2f} ms (medians; target: "
        f"through nginx no worse)"
    )
    most = max(reached, default=0)
    report.row(
        f"requests reaching the service per second during the cached runs: "
        f"{dict(sorted(Counter(reached).items()))} (count of seconds by requests; target at most 1)"
    )
    report.end()
    exact = found_accuracy == 1.0
    refresh = through <= alone and most <= 1
    return 0 if args.smoke or (found >= TARGET and exact and refresh) else 1


if __name__ == "__main__":
    sys.exit(main())
