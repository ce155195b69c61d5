"""What nginx in front costs: wrk against the releases service directly and through the proxy,
alternating, in the same run (absolute numbers drift between runs; the ratio is the figure).

    make bench-proxy            (or: .venv/bin/python bench/proxy/bench.py [--seconds N]
                                                                          [--rounds N] [--smoke])

Starts the same stack as the end-to-end tests (embedded PostgreSQL, the three services, the
example plugin, nginx from deploy/nginx) with their world, on 127.0.0.1 only, and stops it after.
`--smoke` runs one round of 1 s per path: it checks the benchmark works, its figures say nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import shlex
import statistics
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from harness import Report, migrate_database, parse_args, require_tool, workspace, wrk, wrk_argv

HERE = Path(__file__).resolve().parents[2] / "tests-e2e"  # the end-to-end stack and worlds

PATHS = {
    "update check": "/api/v2/repos/acme/app/releases/update?version=1.0.0&platform=linux&arch=x64",
    "release list": "/api/v2/repos/acme/app/releases",
}


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def running_stack(stacks: ModuleType, world: Mapping[str, Any]) -> Iterator[Any]:
    """The end-to-end stack on a fresh database, stopped after. Its start is tried again, once, on
    other ports: on a shared machine another process can take a free port tests-e2e/conftest.py
    picked before the service binds it (the readiness poll then reads another server's answer)."""
    for attempt in (1, 2):
        with workspace("forge-bench-proxy-") as (work, url):
            migrate_database(url)
            running = stacks.start_stack(url, world, work / "stack")
            try:
                stack = next(running)  # on failure the stack's finally already stopped it all
            except (Exception, pytest.fail.Exception) as error:
                if attempt == 2:
                    raise
                print(f"bench-proxy: the stack did not start, starting it again: {error!r}")
                continue
            try:
                yield stack
            finally:
                running.close()  # runs the stack's finally: every process stopped
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=int, help="length of each wrk run")
    parser.add_argument("--rounds", type=int, help="direct/proxy pairs per path")
    args = parse_args(parser, {"seconds": 8, "rounds": 3}, {"seconds": 1, "rounds": 1})
    require_tool("wrk")
    require_tool("nginx")  # the stack would skip (a pytest outcome) without it
    stacks = _module("forge_e2e_conftest", HERE / "conftest.py")
    world = _module("forge_e2e_world", HERE / "test_through_proxy.py").WORLD
    report = Report("bench-proxy", args.smoke)
    with running_stack(stacks, world) as stack:
        duration = f"{args.seconds}s"
        command = shlex.join(wrk_argv("URL", duration))
        report.row(f"{command}, {args.rounds} round(s) each")
        for name, path in PATHS.items():
            ratios = []
            for _ in range(args.rounds):
                direct = wrk(f"http://127.0.0.1:{stack.ports['releases']}{path}", duration)
                proxied = wrk(f"{stack.base_url.rstrip('/')}{path}", duration)
                ratios.append(proxied.rps / direct.rps)
                report.row(
                    f"{name}: direct {direct.rps:.0f} req/s (p99 {direct.p99_ms:.2f} ms) "
                    f"| nginx {proxied.rps:.0f} req/s (p99 {proxied.p99_ms:.2f} ms) "
                    f"| ratio {ratios[-1]:.2f}"
                )
            report.row(
                f"{name}: nginx/direct throughput, median ratio {statistics.median(ratios):.2f}"
            )
    report.end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
