"""Counting the checks nginx answers from its micro-cache (docs/insights.md "Behind the
micro-cache"): nginx writes one line per such answer (`<time> <status> <request URI>`,
deploy/nginx/forge.conf.template `forge_insights`), and `ingest` reads the new lines, turns each
URI into the key the service keeps its answer under, and adds the counts.

Exactly once: the position read up to is stored in `releases.insights_log_positions` and moved
in the same transaction as the counts it covers, under a row lock that replicas skip (one reads
while the others wait for the next round). A crash before the commit leaves the position where
it was: the lines are read again. Identical lines (the same URI in the same second) are counted
with one `Counter`, in C, so a busy cache costs the service a few nanoseconds per answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qsl, unquote

import asyncpg
from aiohttp import web
from forge_common.keys import DB_POOL, SETTINGS

from ..feeds.registry import FEEDS, kept_key, remade_body
from ..read.resolve import lookup
from ..read.update import STABLE, UpdateQuery
from ..read.update_check import prepare_answer, repo_releases
from . import queries
from .counter import Hour, rows_of
from .dimensions import Defaults
from .log_space import first_data

log = logging.getLogger(__name__)

READ_AT_MOST = 16 * 1024 * 1024  # bytes per round: a backlog is read over several rounds
COUNTED = frozenset({"200", "204", "304"})
_CHECK = re.compile(r"^/api/v2/repos/([^/]+)/([^/]+)/releases/update$")
_VARIABLE = re.compile(r"\{(\w+)\}")


def _pattern(route: str) -> re.Pattern[str]:
    """A feed's route as a pattern of the raw path: each variable part one segment."""
    pieces = _VARIABLE.split(route)  # literals at even, names at odd indexes
    return re.compile(
        "".join(f"(?P<{p}>[^/]+)" if i % 2 else re.escape(p) for i, p in enumerate(pieces))
    )


# every feed's route (feeds/registry.py), tried in the router's order
_FEEDS = tuple((_pattern(feed.path), feed) for feed in FEEDS)


def _first(query: str, name: str) -> str:
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == name:
            return value
    return ""


def _first_values(query: str) -> dict[str, str]:
    """The first value of each parameter, as aiohttp's `request.query.get` reads it."""
    values: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, value)
    return values


def key_of(uri: str) -> tuple[str, str, str] | None:
    """(owner, repo, the key the service keeps this request's answer under), as the handlers
    build it (read/update_check.py, feeds/feed.py); None for what is not counted."""
    path, _, query = uri.partition("?")
    if (found := _CHECK.match(path)) is not None:
        owner, repo = (unquote(part) for part in found.groups())
        return owner, repo, query
    for pattern, feed in _FEEDS:
        if (matched := pattern.fullmatch(path)) is not None:
            match = {name: unquote(value) for name, value in matched.groupdict().items()}
            return match["owner"], match["repo"], feed.key_of(match, _first_values(query))
    return None


async def _body(app: web.Application, repo_id: int, key: str, status: str) -> bytes:
    """The body of the answer nginx kept, for the version it offered: the service's own kept
    answer for the key (it made it within the last second or so); else the answer made again
    (the update check's, Squirrel.Mac's, electron-updater's); else none known (an empty body:
    nothing offered)."""
    if status == "204":
        return b""
    releases = await repo_releases(app, repo_id)
    kept = releases.answers.get(kept_key(releases, key))
    if kept is not None:
        return kept.body
    if key.startswith("feed "):
        return remade_body(releases, key)
    settings = app[SETTINGS]
    query = UpdateQuery(
        _first(key, "version"),
        _first(key, "platform") or settings.server_os,
        _first(key, "arch") or settings.server_arch,
        _first(key, "channel") or STABLE,
    )
    try:
        # the URLs inside do not matter: only the version offered is read
        answer = prepare_answer("/", "", "", releases.stable, releases.everything, query)
    except ValueError:
        return b""
    return answer.body


def _hour(text: str) -> int:
    """nginx's `$time_iso8601` (`2026-03-01T10:17:03+00:00`, its local time) → the Unix second
    its UTC hour starts at."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(text)
    second = int(moment.timestamp())
    return second - second % 3600


async def _hours(app: web.Application, lines: Counter[bytes]) -> list[Hour]:
    by_start: dict[int, Hour] = {}
    hours: dict[str, int] = {}  # each second's text parsed once
    for line, n in lines.items():
        parts = line.decode("utf-8", "replace").split(" ", 2)
        if len(parts) != 3 or parts[1] not in COUNTED:
            continue
        hour_text, status, uri = parts
        found = key_of(uri)
        if found is None:
            continue
        owner, repo, key = found
        entry = await lookup(app, owner, repo)
        if entry is None:
            continue
        start = hours.get(hour_text)
        if start is None:
            try:
                start = hours[hour_text] = _hour(hour_text)
            except ValueError:
                continue
        body = await _body(app, entry.ref.repo_id, key, status)
        hour = by_start.setdefault(start, Hour(start))
        hour.checks[(entry.ref.repo_id, key, body)] += n
    return list(by_start.values())


def _read(path: Path, inode: int, position: int) -> tuple[int, int, bytes]:
    """(inode, the position after the last whole line read, those lines) from `position`, or
    from the start when the file was replaced (rotated) or cut shorter."""
    with path.open("rb") as file:
        stat = os.fstat(file.fileno())
        if stat.st_ino != inode or stat.st_size < position:
            position = 0
        position = first_data(file.fileno(), position, stat.st_size)  # past a freed hole
        file.seek(position)
        data = file.read(READ_AT_MOST)
    # what is left of a hole (its last block, partly freed) reads as zeros, never in a line
    skipped = len(data) - len(data.lstrip(b"\0"))
    whole = data[skipped : data.rfind(b"\n") + 1]
    return stat.st_ino, position + skipped + len(whole), whole


@dataclass(frozen=True, slots=True)
class Round:
    """What a round left stored: the file's inode, the position counted up to, and how many
    checks it added."""

    inode: int
    position: int
    counted: int


async def read_round(app: web.Application, path: Path, name: str) -> Round | None:
    """Count the lines added to `path` since the last round of any reader of the same `name`
    (the key of its position: the path, shared by the service's replicas; beside nginx, the
    pod's own: insights/beside_nginx.py). None: another replica is reading, or no file yet."""
    pool = app[DB_POOL]
    await queries.add_log_position(pool, name)
    async with pool.acquire() as conn, conn.transaction():
        stored = await queries.lock_log_position(conn, name)
        if stored is None:
            return None  # another replica is reading
        try:
            inode, position, data = _read(path, *stored)
        except FileNotFoundError:
            return None  # nginx has answered nothing from its cache yet
        if (inode, position) == stored:
            return Round(inode, position, 0)
        lines = Counter(data.splitlines())
        settings = app[SETTINGS]
        rows = rows_of(await _hours(app, lines), Defaults(settings.server_os, settings.server_arch))
        if rows:
            await queries.add_counts(conn, rows)
        await queries.move_log_position(conn, name, inode, position)
    return Round(inode, position, sum(row.n for row in rows))


async def ingest(app: web.Application, path: Path) -> int:
    """Count the lines added to `path` since the last round (any replica's); returns how many."""
    done = await read_round(app, path, str(path))
    return 0 if done is None else done.counted


async def ingest_forever(app: web.Application, path: Path, interval: float) -> None:
    while True:
        try:
            await ingest(app, path)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("could not count the proxy's cached answers yet: %s", exc)
        await asyncio.sleep(interval)
