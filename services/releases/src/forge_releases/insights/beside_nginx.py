"""`forge insights count-proxy-log`: the releases service's reader of nginx's log of micro-cache
hits (proxy_log.py), alone in a process beside nginx, for where nginx cannot share the file with
the service (Kubernetes: a sidecar in the nginx pod; docs/insights.md "In Kubernetes").

It is the same `read_round` the service runs, with what it needs and nothing else: the database
pool, the release cache (kept true by the LISTEN connection) to find the version each cached
answer offered, and `/healthz`. Its position is stored under `<host name>:<path>`: each nginx
pod has its own file, and two pods must not share a position. It frees the counted lines' space
(log_space.py) and does a last round when stopped: as a Kubernetes native sidecar it is stopped
after nginx, which writes its buffered lines when it exits.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import asyncpg
from aiohttp import web
from forge_common import tasks
from forge_common.app import base_app
from forge_common.config import ConfigError, Settings
from forge_common.render import json_response
from forge_common.serving import serve

from ..keys import OPTIONS, RELEASE_CACHE
from ..lifecycle import listener_context
from ..options import Options, with_settings
from ..read.cache import ReleaseCache
from .log_space import LogSpace
from .proxy_log import read_round

log = logging.getLogger(__name__)

# Uncounted bytes kept while the database is unreachable (log_space.py): at about 100 bytes a
# line, some 600,000 cached answers; the pod's volume limit (deploy/k8s/base/nginx.yaml) is 4x.
BACKLOG_LIMIT = 64 * 1024 * 1024
_FAILED = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError)


def position_name(path: Path) -> str:
    """The key of this reader's position: the host's (the pod's) own file at `path`."""
    return f"{socket.gethostname()}:{path}"


class Reader:
    def __init__(self, path: Path, name: str, limit: int = BACKLOG_LIMIT) -> None:
        self.path = path
        self.name = name
        self.space = LogSpace(path, limit)

    async def round(self, app: web.Application) -> None:
        done = None
        try:
            done = await read_round(app, self.path, self.name)
        except _FAILED as exc:
            log.warning("could not count the proxy's cached answers yet: %s", exc)
        try:
            if done is not None:
                self.space.counted(done.inode, done.position)
            dropped = self.space.bound()
        except FileNotFoundError:  # nginx has answered nothing from its cache yet
            dropped = 0
        except OSError as exc:
            log.warning("could not free the space of the proxy's log: %s", exc)
            dropped = 0
        if dropped:
            log.warning(
                "gave up %d bytes of the proxy's log uncounted: more than %d were waiting "
                "(is the database reachable?)",
                dropped,
                self.space.limit,
            )

    async def forever(self, app: web.Application, interval: float) -> None:
        while True:
            await self.round(app)
            await asyncio.sleep(interval)


READING = web.AppKey("insights_proxy_log_reading", asyncio.Task)


def _reading_context(
    reader: Reader,
) -> Callable[[web.Application], AsyncIterator[None]]:
    async def context(app: web.Application) -> AsyncIterator[None]:
        interval = app[OPTIONS].insights_flush_interval
        app[READING] = asyncio.create_task(reader.forever(app, interval), name="proxy-log")
        yield
        await tasks.stop(app[READING])
        await reader.round(app)  # nginx has stopped: what it wrote last

    return context


# the sidecar's pool: its reader and its release cache (docs/deploy.md "PostgreSQL connections")
POOL_SIZE = 2


async def _healthz(request: web.Request) -> web.Response:
    """Alive while its reading loop is (a database outage does not make it unhealthy: it only
    waits, and restarting would not help)."""
    if request.app[READING].done():
        return json_response({"status": "stopped"}, status=503)
    return json_response({"status": "ok"})


def beside_nginx_app(settings: Settings, options: Options, reader: Reader) -> web.Application:
    """The common application (forge_common.app) without a service's routes, middleware, relay
    or metrics. Its pool opens no connection at start: a database down does not stop the reader
    from starting, and with it the nginx pod (nor from bounding the log meanwhile)."""
    app = base_app(settings, pool_size=(0, POOL_SIZE))
    app[OPTIONS] = options
    app[RELEASE_CACHE] = ReleaseCache(options.cache)
    app.cleanup_ctx.append(listener_context)
    app.cleanup_ctx.append(_reading_context(reader))
    app.router.add_get("/healthz", _healthz)
    return app


def add_insights_commands(commands: Any) -> None:
    insights = commands.add_parser("insights", help="insights (docs/insights.md)")
    actions = insights.add_subparsers(dest="insights_command", required=True)
    count = actions.add_parser(
        "count-proxy-log",
        help="count the checks nginx answered from its micro-cache, beside nginx",
        description="Reads INSIGHTS_PROXY_LOG (nginx's INSIGHTS_LOG) every INSIGHTS_FLUSH_SECONDS "
        "(2) and adds its lines to the counts in DATABASE_URL, each once; frees what it counted. "
        "Serves /healthz on --port.",
    )
    count.add_argument("--host", default="0.0.0.0")
    count.add_argument("--port", type=int, default=8081)
    count.set_defaults(handler=run_count_proxy_log)


def run_count_proxy_log(args: Any, env: Mapping[str, str]) -> int:
    try:
        settings = Settings.from_env(env)
        path = settings.insights_proxy_log
        if path is None:
            raise ConfigError("INSIGHTS_PROXY_LOG must name the file nginx writes (INSIGHTS_LOG)")
    except ConfigError as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    options = with_settings(Options(), settings)
    reader = Reader(path, position_name(path))
    app = beside_nginx_app(settings, options, reader)

    def started() -> None:
        print(f"forge: counting {path} as {reader.name}; /healthz on :{args.port}", flush=True)

    asyncio.run(
        serve(
            app,
            args.host,
            args.port,
            shutdown_timeout=settings.shutdown_timeout,
            on_started=started,
        )
    )
    return 0
