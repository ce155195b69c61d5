"""Ports and names of one pytest-xdist worker: `make test` runs the tests in several processes
(README.md "Tests"), so two workers must never pick the same port for the processes they
start, nor the same database name.

Each worker takes ports from a block of its own, below the kernel's ephemeral range (32768 and up
on Linux), where no outgoing connection is ever given one: a port handed out here is free unless
something outside the tests listens on it, which `free_port` checks by binding it. Asking the
kernel for port 0, as `forge_common.embedded_pg.free_port` does, can give two workers the same
port between one closing its probe socket and its process binding it.
"""

from __future__ import annotations

import itertools
import os
import socket

FIRST_PORT = 20000
PORTS_PER_WORKER = 1000  # 12 workers fit below 32768


def worker_name() -> str:
    """`gw0`, `gw1`, ... under pytest-xdist; `main` in a run without workers."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def worker_index() -> int:
    name = worker_name()
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


_next = itertools.count()


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on, from this worker's block (its ports are used
    round-robin: a port handed out is not handed out again until the block wraps). A process that
    is no worker (`make test`'s bench-smoke and fuzz-smoke run beside the workers) takes one from
    the kernel's ephemeral range, which no worker's block overlaps: with the first block it took
    the ports of worker gw0's moto and PostgreSQL servers."""
    if worker_name() == "main":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    block = FIRST_PORT + worker_index() % 12 * PORTS_PER_WORKER
    for _ in range(PORTS_PER_WORKER):
        port = block + next(_next) % PORTS_PER_WORKER
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {block}-{block + PORTS_PER_WORKER - 1}")
