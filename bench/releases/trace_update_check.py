"""Which of our files and lines one update check runs, traced with `sys.setprofile`: the figure
docs/architecture.md "A request's walk" states, re-made by

    .venv/bin/python bench/releases/trace_update_check.py [--functions]

The releases service is served in this process as `forge serve` serves it (`ForgeRunner`, the fast
paths included) on a throwaway database with one public repository of 10 releases. After a
warm-up check (another version, not traced), two checks of the same target are traced, each on a
connection of its own: the first is a miss (no answer kept for it: decided, prepared and kept),
the second is answered from what the first kept. Only calls made while the server handles the
request count (the tasks that exist before it, the client's and the background loops', are left
out), and only our own code (services/*/src). For each file: the functions that ran and their
lines (from `def` to the function's last line: what a reader of that path reads), and the
file's own length. `--functions` lists the functions too.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the shared harness
from aiohttp import web
from forge_common.config import Settings
from forge_common.embedded_pg import free_port
from forge_common.serving import ForgeRunner
from forge_releases.service import create_app
from harness import add_bench_app, add_desktop_releases, fail, migrated, workspace

ROOT = Path(__file__).resolve().parents[2]
OURS = str(ROOT / "services")
TARGET = "/api/v2/repos/bench/app/releases/update?version=1.2.0&platform=darwin&arch=arm64"
WARM_UP = "/api/v2/repos/bench/app/releases/update?version=1.1.0&platform=darwin&arch=arm64"


@dataclass
class Trace:
    """Code objects of ours called from tasks other than `left_out`."""

    left_out: set[asyncio.Task[Any]]
    codes: set[CodeType] = field(default_factory=set)

    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code in self.codes or not code.co_filename.startswith(OURS):
            return
        if "/tests/" in code.co_filename:
            return
        try:
            task = asyncio.current_task()
        except RuntimeError:
            return
        if task is None or task in self.left_out:
            return
        self.codes.add(code)


def function_lines(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return max([code.co_firstlineno, *lines]) - code.co_firstlineno + 1


def by_file(codes: set[CodeType]) -> dict[str, list[CodeType]]:
    files: dict[str, list[CodeType]] = defaultdict(list)
    for code in codes:
        files[code.co_filename].append(code)
    return dict(sorted(files.items()))


def outermost(codes: list[CodeType]) -> Iterator[CodeType]:
    """The functions not nested in another one that ran (a closure's lines are its parent's)."""
    spans = sorted(codes, key=lambda c: (c.co_firstlineno, -function_lines(c)))
    end = 0
    for code in spans:
        if code.co_firstlineno > end:
            end = code.co_firstlineno + function_lines(code) - 1
            yield code


def report(name: str, codes: set[CodeType], functions: bool) -> None:
    files = by_file(codes)
    total_run = total_file = 0
    print(f"\n{name}: {len(files)} files, {len(codes)} functions")
    print(f"  {'file':<62} {'functions':>9} {'lines run':>9} {'file':>6}")
    for path, run in files.items():
        lines = sum(function_lines(c) for c in outermost(run))
        length = len(Path(path).read_text().splitlines())
        total_run, total_file = total_run + lines, total_file + length
        print(f"  {Path(path).relative_to(ROOT)!s:<62} {len(run):>9} {lines:>9} {length:>6}")
        if functions:
            for code in sorted(run, key=lambda c: c.co_firstlineno):
                print(f"      {code.co_firstlineno:>4} {code.co_qualname} ({function_lines(code)})")
    print(f"  {'total':<62} {len(codes):>9} {total_run:>9} {total_file:>6}")


async def get(port: int, target: str) -> bytes:
    """One GET on a connection of its own, read to the end (the server closes it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: forge.test\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def traced(port: int, target: str) -> tuple[set[CodeType], bytes]:
    trace = Trace(left_out=set(asyncio.all_tasks()))
    sys.setprofile(trace.profile)
    try:
        answer = await get(port, target)
    finally:
        sys.setprofile(None)
    return trace.codes, answer


async def run(database_url: str, folder: Path, functions: bool) -> None:
    async with migrated(database_url) as conn:
        _, repo = await add_bench_app(conn)
        await add_desktop_releases(conn, repo, 10, "")
    settings = Settings(
        database_url=database_url,
        app_url="http://forge.test/",
        storage_path=folder / "storage",
        server_os="linux",
        server_arch="x64",
    )
    runner = ForgeRunner(create_app(settings), access_log=None, handler_cancellation=False)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        if not (await get(port, WARM_UP)).startswith(b"HTTP/1.1 200"):
            fail("the warm-up update check did not answer 200")
        miss, first = await traced(port, TARGET)
        kept, second = await traced(port, TARGET)
        if first.split(b"\r\n\r\n", 1)[1] != second.split(b"\r\n\r\n", 1)[1]:
            fail("the kept answer is not the answer the miss gave")
        report("a miss (decided, prepared and kept)", miss, functions)
        report("a kept answer (the same target again)", kept, functions)
    finally:
        await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", action="store_true", help="list the functions too")
    args = parser.parse_args()
    with workspace("forge-trace-") as (folder, database_url):
        asyncio.run(run(database_url, folder, args.functions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
