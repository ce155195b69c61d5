"""What bench.py watches besides the events' arrivals: the APIs' answers during the overload,
the services' 5xx answers, the bare gRPC ceiling measured in the same minutes, why attempts were
repeated, and PostgreSQL's top statements of a phase."""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
from harness import Report, fail

CEILING = Path(__file__).with_name("grpc_ceiling.py")


class Prober:
    """Asks the APIs every `interval` s while a phase runs: does the gateway still answer its
    admin API (the delivery tables, through its pool) and the producer its release list?"""

    def __init__(
        self, urls: dict[str, str], headers: dict[str, str], interval: float = 0.5
    ) -> None:
        self.urls = urls
        self.headers = headers
        self.interval = interval
        self.statuses: dict[str, Counter[int]] = {name: Counter() for name in urls}
        self.slowest: dict[str, float] = dict.fromkeys(urls, 0.0)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> str:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        parts = []
        for name, counts in self.statuses.items():
            answers = ", ".join(f"{n} × {status}" for status, n in sorted(counts.items()))
            parts.append(f"{name}: {answers or 'none'}, slowest {self.slowest[name] * 1000:.0f} ms")
        return "; ".join(parts)

    @property
    def failures(self) -> int:
        return sum(n for c in self.statuses.values() for status, n in c.items() if status >= 300)

    async def _run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=60)
        async with aiohttp.ClientSession(timeout=timeout, headers=self.headers) as session:
            while True:
                await asyncio.gather(*(self._ask(session, n) for n in self.urls))
                await asyncio.sleep(self.interval)

    async def _ask(self, session: aiohttp.ClientSession, name: str) -> None:
        began = time.monotonic()
        try:
            async with session.get(self.urls[name]) as resp:
                await resp.read()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError):
            status = 599  # no answer at all
        self.statuses[name][status] += 1
        self.slowest[name] = max(self.slowest[name], time.monotonic() - began)


async def server_errors(url: str) -> Counter[str]:
    """5xx answers of the service at `url` so far, by route and status (its /metrics)."""
    async with aiohttp.ClientSession() as session, session.get(url + "metrics") as resp:
        text = await resp.text()
    errors: Counter[str] = Counter()
    for line in text.splitlines():
        found = re.match(r"forge_http_requests_total\{(.*)\} ([0-9.e+]+)$", line)
        if not found:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', found.group(1)))
        if labels.get("status", "").startswith("5"):
            errors[f"{labels.get('method')} {labels.get('route')} {labels['status']}"] += int(
                float(found.group(2))
            )
    return errors


async def grpc_ceiling(in_flight: int, smoke: bool) -> float:
    """Bare OnEvent calls/s between two processes (grpc_ceiling.py), now, `in_flight` at once.
    Run without blocking this loop: the recording plugin must keep answering health checks."""
    command = [str(CEILING), "--in-flight", str(in_flight)]
    command += ["--smoke"] if smoke else ["--seconds", "5"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    text = out.decode(errors="replace")
    found = re.search(r"in flight +\d+: +(\d+) OnEvent calls/s", text)
    if process.returncode != 0 or found is None:
        fail(f"grpc_ceiling.py failed: {text}")
    return float(found.group(1))


async def repeated_attempts(conn: asyncpg.Connection[Any]) -> str:
    """Why attempts other than a delivered first one were made: each kind of outcome or error."""
    rows = await conn.fetch(
        """SELECT outcome, coalesce(split_part(error, ':', 1), '') AS why, count(*) AS n
             FROM gateway.delivery_attempts WHERE outcome <> 'delivered' OR attempt > 1
            GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 6"""
    )
    return ", ".join(f"{r['n']} {r['outcome']} ({r['why'] or '-'})" for r in rows) or "none"


async def top_statements(conn: asyncpg.Connection[Any], report: Report, since: str) -> None:
    """pg_stat_statements' top 12 by total time since the last reset, then reset it."""
    rows = await conn.fetch(
        """SELECT calls, round(total_exec_time) AS ms, left(regexp_replace(query, '\\s+', ' ',
                  'g'), 110) AS query
             FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12"""
    )
    report.row(f"pg_stat_statements, top 12 by total time, from {since}:")
    for row in rows:
        report.row(f"  {row['ms']:>7} ms {row['calls']:>8} calls  {row['query']}")
    await conn.execute("SELECT pg_stat_statements_reset()")
