"""The SQL of insights: adding counts (one statement for the hourly rows, the daily rows and the
daily per-dimension sums), pruning old rows, and reading series for the API and the page."""

from __future__ import annotations

import functools
from calendar import monthrange
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

import asyncpg
import orjson

from .dimensions import DIMENSIONS, Dims


@dataclass(frozen=True, slots=True)
class Row:
    hour: datetime
    repo_id: int
    release_id: int  # a download's release (its tag and channel are read in the statement); 0
    dims: Dims
    n: int


_COLUMNS = "kind, feed, running, offered, platform, arch, channel, file"
# unnest of the batch; a download's `offered` and `channel` come from its release, and counts of
# a repository deleted meanwhile are dropped (the join), never an error that blocks the batch
_PER_DIM = ", ".join(f"('{d}', v.{d})" for d in DIMENSIONS)
_BATCH = f"""
WITH v AS (
    SELECT b.hour, b.repo_id, b.kind, b.feed, b.running,
           CASE WHEN b.release_id > 0 THEN coalesce(regexp_replace(r.tag, '^v', ''), '')
                ELSE b.offered END AS offered,
           b.platform, b.arch,
           CASE WHEN b.release_id > 0
                THEN CASE WHEN r.prerelease THEN 'prerelease' ELSE 'stable' END
                ELSE b.channel END AS channel,
           b.file, b.n
      FROM unnest($1::timestamptz[], $2::bigint[], $3::bigint[], $4::text[], $5::text[],
                  $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                  $12::bigint[])
           AS b(hour, repo_id, release_id, kind, feed, running, offered, platform, arch,
                channel, file, n)
      JOIN core.repositories repo ON repo.id = b.repo_id
      LEFT JOIN releases.releases r ON r.id = b.release_id
),
hourly AS (
    INSERT INTO releases.insights_hourly AS t (repo_id, hour, {_COLUMNS}, n)
    SELECT repo_id, hour, {_COLUMNS}, sum(n) FROM v GROUP BY repo_id, hour, {_COLUMNS}
    ON CONFLICT (repo_id, hour, {_COLUMNS}) DO UPDATE SET n = t.n + excluded.n
),
daily AS (
    INSERT INTO releases.insights_daily AS t (repo_id, day, {_COLUMNS}, n)
    SELECT repo_id, (hour AT TIME ZONE 'UTC')::date, {_COLUMNS}, sum(n)
      FROM v GROUP BY repo_id, (hour AT TIME ZONE 'UTC')::date, {_COLUMNS}
    ON CONFLICT (repo_id, day, {_COLUMNS}) DO UPDATE SET n = t.n + excluded.n
),
per_day AS (
    SELECT v.repo_id, v.kind, d.dim, d.value, (v.hour AT TIME ZONE 'UTC')::date AS day,
           sum(v.n) AS n
      FROM v CROSS JOIN LATERAL (VALUES {_PER_DIM}) AS d(dim, value)
     GROUP BY 1, 2, 3, 4, 5
),
per_month AS (
    SELECT repo_id, kind, dim, value, date_trunc('month', day)::date AS month,
           array_agg(extract(day FROM day)::int) AS days, array_agg(n) AS ns
      FROM per_day GROUP BY 1, 2, 3, 4, 5
)
INSERT INTO releases.insights_monthly_by AS t (repo_id, kind, dim, value, month, counts)
SELECT repo_id, kind, dim, value, month,
       ARRAY(SELECT coalesce(ns[array_position(days, i)], 0)
               FROM generate_series(1, 31) AS i ORDER BY i)
  FROM per_month
ON CONFLICT (repo_id, kind, dim, value, month) DO UPDATE
   SET counts = ARRAY(SELECT a + b FROM unnest(t.counts, excluded.counts)
                                        WITH ORDINALITY AS u(a, b, i) ORDER BY i)
"""


class Executes(Protocol):
    """A pool or a connection (inside a transaction: insights/proxy_log.py)."""

    async def execute(self, query: str, *args: Any) -> str: ...


class Fetches(Executes, Protocol):
    """A connection inside a transaction (insights/proxy_log.py)."""

    async def fetchrow(self, query: str, *args: Any) -> Any: ...


async def add_counts(pool: Executes, rows: list[Row]) -> None:
    """Add `rows` to the stored counts: one statement, so a batch is written whole or not at all."""
    dims = [row.dims for row in rows]
    await pool.execute(
        _BATCH,
        [row.hour for row in rows],
        [row.repo_id for row in rows],
        [row.release_id for row in rows],
        [d.kind for d in dims],
        [d.feed for d in dims],
        [d.running for d in dims],
        [d.offered for d in dims],
        [d.platform for d in dims],
        [d.arch for d in dims],
        [d.channel for d in dims],
        [d.file for d in dims],
        [row.n for row in rows],
    )


async def add_log_position(pool: Executes, name: str) -> None:
    """The position row of the proxy log `name` (insights/proxy_log.py), at its start if new."""
    await pool.execute(
        "INSERT INTO releases.insights_log_positions (path, inode, position) VALUES ($1, 0, 0)"
        " ON CONFLICT (path) DO NOTHING",
        name,
    )


async def lock_log_position(conn: Fetches, name: str) -> tuple[int, int] | None:
    """(inode, position) of the proxy log `name`, locked until the transaction ends; None while
    another reader holds it."""
    row = await conn.fetchrow(
        "SELECT inode, position FROM releases.insights_log_positions WHERE path = $1"
        " FOR UPDATE SKIP LOCKED",
        name,
    )
    return None if row is None else (row["inode"], row["position"])


async def move_log_position(conn: Executes, name: str, inode: int, position: int) -> None:
    """Store how far the proxy log `name` is counted, in the transaction that added the counts."""
    await conn.execute(
        "UPDATE releases.insights_log_positions SET inode = $2, position = $3 WHERE path = $1",
        name,
        inode,
        position,
    )


async def prune(pool: asyncpg.Pool, now: datetime, keep_days: int) -> None:
    """Hourly rows older than 2 days, daily ones older than `keep_days` days, go (one statement);
    a month's row of per-dimension sums goes when its last day has (so up to a month more)."""
    await pool.execute(
        """WITH h AS (DELETE FROM releases.insights_hourly WHERE hour < $1),
                d AS (DELETE FROM releases.insights_daily WHERE day < $2)
           DELETE FROM releases.insights_monthly_by
            WHERE month < date_trunc('month', $2::date)::date""",
        now - timedelta(hours=48),
        now.astimezone(UTC).date() - timedelta(days=keep_days),
    )


Dense = dict[str, list[int]]  # value → one count per bucket


def _dense(rows: list[asyncpg.Record], buckets: int) -> Dense:
    """Each value's counts at their bucket indexes (the query sends index and count arrays)."""
    out: Dense = {}
    for row in rows:
        counts = [0] * buckets
        for i, n in zip(row["at"], row["ns"], strict=True):
            counts[i] = n
        out[row["value"]] = counts
    return out


@functools.lru_cache(maxsize=64)
def _days_in(month: date) -> int:
    return monthrange(month.year, month.month)[1]


async def daily_series(
    pool: asyncpg.Pool, repo_id: int, kind: str, dim: str, start: date, end: date
) -> Dense:
    """Daily counts of `kind` by `dim` for the days in [start, end]: each month's row's days
    copied into place (a few thousand rows for a year of 200 versions). The rows come as one
    JSON text parsed by orjson: decoding them as `bigint[]` took most of the request's time
    (docs/insights.md "Storage for fast charts")."""
    text = await pool.fetchval(
        """SELECT coalesce(json_agg(json_build_array(value, months)), '[]')::text
             FROM (SELECT value,
                          json_agg(json_build_array(month - $6::date, counts) ORDER BY month)
                            AS months
                     FROM releases.insights_monthly_by
                    WHERE repo_id = $1 AND kind = $2 AND dim = $3 AND month BETWEEN $4 AND $5
                    GROUP BY value) AS per_value""",
        repo_id,
        kind,
        dim,
        start.replace(day=1),
        end,
        start,
    )
    length = (end - start).days + 1
    # each month's days in the window, by the month's offset from `start`: the same months for
    # every value, so worked out once, not per row
    spans = {
        offset: (max(0, -offset), min(31, length - offset, _days_in(month)))
        for month in _months(start.replace(day=1), end)
        for offset in ((month - start).days,)
    }
    out: Dense = {}
    for value, months in orjson.loads(text):
        dense = out[value] = [0] * length
        for offset, counts in months:  # offset: the month's first day, from `start`
            first, last = spans[offset]
            if first < last:
                dense[offset + first : offset + last] = counts[first:last]
    return out


def _months(first: date, end: date) -> list[date]:
    """The first days of the months from `first` (a first day) to the month of `end`."""
    months = []
    while first <= end:
        months.append(first)
        if (first.year, first.month) == (end.year, end.month):
            break  # the month after December 9999 is no date
        first = (first + timedelta(days=32)).replace(day=1)
    return months


_HOURLY_COLUMNS = frozenset(DIMENSIONS)


async def hourly_series(
    pool: asyncpg.Pool, repo_id: int, kind: str, dim: str, start: datetime, end: datetime
) -> Dense:
    """Hourly counts of `kind` by `dim` for the hours in [start, end]."""
    if dim not in _HOURLY_COLUMNS:  # a column name: only ever one of ours
        raise ValueError(dim)
    rows = await pool.fetch(
        f"""SELECT value, array_agg(at ORDER BY at) AS at, array_agg(n ORDER BY at) AS ns
              FROM (SELECT {dim} AS value,
                           (extract(epoch FROM hour - $3::timestamptz) / 3600)::int AS at,
                           sum(n)::bigint AS n
                      FROM releases.insights_hourly
                     WHERE repo_id = $1 AND kind = $2 AND hour BETWEEN $3 AND $4
                     GROUP BY 1, 2) AS per_hour
             GROUP BY value""",
        repo_id,
        kind,
        start,
        end,
    )
    return _dense(rows, int((end - start).total_seconds() // 3600) + 1)
