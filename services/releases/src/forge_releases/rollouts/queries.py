"""The SQL of rollout plans (migration 0012): the plan row, its events, the posted health
figures, and the insights counts the gates read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from forge_common.db import Conn, Queryable

PLAN_COLUMNS = """p.release_id, p.repo_id, p.steps, p.gates, p.on_failure, p.state, p.step,
    p.started_at, p.step_started_at, p.due_at, p.summary, p.detail, p.updated_at,
    r.tag, r.draft, r.prerelease, r.rollout, r.withdrawn"""


@dataclass(frozen=True, slots=True)
class PlanRow:
    release_id: int
    repo_id: int
    steps: list[dict[str, Any]]
    gates: dict[str, Any]
    on_failure: str
    state: str
    step: int
    started_at: datetime
    step_started_at: datetime
    due_at: datetime | None
    summary: str
    detail: str
    updated_at: datetime
    tag: str
    draft: bool
    prerelease: bool
    rollout: int | None
    withdrawn: bool


def _plan(row: asyncpg.Record | None) -> PlanRow | None:
    if row is None:
        return None
    return PlanRow(**dict(row))  # jsonb arrives decoded (forge_common.db's codec)


async def plan_of(
    db: Queryable, repo_id: int, release_id: int, *, lock: bool = False
) -> PlanRow | None:
    locking = " FOR UPDATE OF p" if lock else ""
    row = await db.fetchrow(
        f"""SELECT {PLAN_COLUMNS} FROM releases.rollout_plans p
              JOIN releases.releases r ON r.id = p.release_id
             WHERE p.repo_id = $1 AND p.release_id = $2{locking}""",
        repo_id,
        release_id,
    )
    return _plan(row)


async def claim_due(conn: Conn, limit: int) -> list[PlanRow]:
    """Running plans whose evaluation is due, locked; those another replica holds are skipped
    (it is deciding them), so each due time is decided once."""
    rows = await conn.fetch(
        f"""SELECT {PLAN_COLUMNS} FROM releases.rollout_plans p
              JOIN releases.releases r ON r.id = p.release_id
             WHERE p.state = 'running' AND p.due_at <= now()
             ORDER BY p.due_at LIMIT $1
               FOR UPDATE OF p SKIP LOCKED""",
        limit,
    )
    return [plan for row in rows if (plan := _plan(row)) is not None]


async def save_plan(
    conn: Conn, repo_id: int, release_id: int, steps: Any, gates: Any, on_failure: str, step: int,
    summary: str,
) -> None:  # fmt: skip
    """Create or replace the release's plan, running from `step` now."""
    await conn.execute(
        """INSERT INTO releases.rollout_plans
               (release_id, repo_id, steps, gates, on_failure, state, step, due_at, summary)
           VALUES ($1, $2, $3, $4, $5, 'running', $6, now(), $7)
           ON CONFLICT (release_id) DO UPDATE
              SET steps = EXCLUDED.steps, gates = EXCLUDED.gates,
                  on_failure = EXCLUDED.on_failure, state = 'running', step = EXCLUDED.step,
                  started_at = now(), step_started_at = now(), due_at = now(),
                  summary = EXCLUDED.summary, detail = '', updated_at = now()""",
        release_id,
        repo_id,
        steps,
        gates,
        on_failure,
        step,
        summary,
    )


async def set_state(
    conn: Conn, release_id: int, *, state: str, step: int, new_step: bool, due_in: float | None,
    summary: str, detail: str,
) -> None:  # fmt: skip
    """The plan after a decision: `due_in` seconds to its next evaluation (None: not running)."""
    await conn.execute(
        """UPDATE releases.rollout_plans
              SET state = $2, step = $3,
                  step_started_at = CASE WHEN $4 THEN now() ELSE step_started_at END,
                  due_at = CASE WHEN $5::float8 IS NULL THEN NULL
                                ELSE now() + make_interval(secs => $5) END,
                  summary = $6, detail = $7, updated_at = now()
            WHERE release_id = $1""",
        release_id,
        state,
        step,
        new_step,
        due_in,
        summary,
        detail,
    )


async def postpone(conn: Conn, release_id: int, seconds: float) -> None:
    await conn.execute(
        """UPDATE releases.rollout_plans SET due_at = now() + make_interval(secs => $2)
            WHERE release_id = $1""",
        release_id,
        seconds,
    )


async def set_rollout(conn: Conn, release_id: int, percent: int) -> None:
    """The release's staged-rollout percentage (0003_rollout.sql); the triggers of 0002 tell
    every replica's cache."""
    await conn.execute(
        "UPDATE releases.releases SET rollout = $2, updated_at = now() WHERE id = $1",
        release_id,
        percent,
    )


async def add_event(
    conn: Conn, release_id: int, kind: str, step: int, percent: int, actor_id: int | None,
    summary: str, detail: str, figures: dict[str, Any],
) -> None:  # fmt: skip
    await conn.execute(
        """INSERT INTO releases.rollout_events
               (release_id, kind, step, percent, actor_id, summary, detail, figures)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""",
        release_id,
        kind,
        step,
        percent,
        actor_id,
        summary,
        detail,
        figures,
    )


async def events_of(db: Queryable, release_id: int, limit: int = 200) -> list[dict[str, Any]]:
    """The plan's last `limit` decisions, oldest first."""
    rows = await db.fetch(
        """SELECT * FROM (
               SELECT id, at, kind, step, percent, actor_id, summary, detail, figures
                 FROM releases.rollout_events WHERE release_id = $1
                ORDER BY id DESC LIMIT $2) last
           ORDER BY id""",
        release_id,
        limit,
    )
    return [dict(row) for row in rows]


async def put_health(db: Queryable, release_id: int, sessions: int, crashed: int) -> None:
    await db.execute(
        """INSERT INTO releases.release_health (release_id, sessions, crashed_sessions)
           VALUES ($1, $2, $3)
           ON CONFLICT (release_id) DO UPDATE
              SET sessions = $2, crashed_sessions = $3, updated_at = now()""",
        release_id,
        sessions,
        crashed,
    )


async def health_of(db: Queryable, release_id: int) -> tuple[int, int] | None:
    """The release's newest figures: posted to the health endpoint, or reported by a plugin
    (core.plugin_release_health, written by the gateway; docs/rollouts.md "From a plugin")."""
    row = await db.fetchrow(
        """SELECT sessions, crashed_sessions FROM (
               SELECT sessions, crashed_sessions, updated_at
                 FROM releases.release_health WHERE release_id = $1
               UNION ALL
               SELECT sessions, crashed_sessions, updated_at
                 FROM core.plugin_release_health WHERE release_id = $1) reported
            ORDER BY updated_at DESC LIMIT 1""",
        release_id,
    )
    return None if row is None else (row["sessions"], row["crashed_sessions"])


async def replaced_release(db: Queryable, release_id: int) -> tuple[int, str] | None:
    """The release this one replaces: the newest published one of its repository created before
    it (a stable one unless this is a prerelease)."""
    row = await db.fetchrow(
        """SELECT r.id, r.tag FROM releases.releases r
             JOIN releases.releases n ON n.id = $1 AND r.repo_id = n.repo_id
            WHERE NOT r.draft AND r.id <> n.id AND (n.prerelease OR NOT r.prerelease)
              AND r.created_at < n.created_at
            ORDER BY r.created_at DESC, r.id DESC LIMIT 1""",
        release_id,
    )
    return None if row is None else (row["id"], row["tag"])


async def uptake_counts(
    db: Queryable, repo_id: int, version: str, tag: str, since: datetime
) -> tuple[int, int, int]:
    """From insights' hourly counts since the hour of `since`: checks running `version`, checks
    offered it by installs that said another version, and downloads of its files."""
    row = await db.fetchrow(
        """SELECT coalesce(sum(n) FILTER (WHERE kind = 'check' AND running = $2), 0) AS running,
                  coalesce(sum(n) FILTER (WHERE kind = 'check' AND offered = $2
                      AND running NOT IN ('', 'other', $2)), 0) AS offered,
                  coalesce(sum(n) FILTER (WHERE kind = 'download'
                      AND offered = regexp_replace($4, '^v', '')), 0)
                      AS downloads
             FROM releases.insights_hourly
            WHERE repo_id = $1 AND hour >= date_trunc('hour', $3::timestamptz)""",
        repo_id,
        version,
        since,
        tag,
    )
    assert row is not None  # an aggregate always has a row
    return int(row["running"]), int(row["offered"]), int(row["downloads"])
