"""The SQL of release health from plugins (gateway migration 0004, core migration 0008): the
rollouts the releases service's events tell of, each plugin's due round, and the figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from forge_common.db import Conn, Queryable


@dataclass(frozen=True, slots=True)
class RolloutChange:
    """One rollout's state as an event told it (`deleted`: the release is gone)."""

    release_id: int
    repo_id: int
    tag: str
    replaces_release_id: int | None
    replaces_tag: str | None
    state: str
    decided_at: datetime


@dataclass(frozen=True, slots=True)
class RunningRollout:
    release_id: int
    repo_id: int
    owner: str
    repo: str
    tag: str
    replaces_release_id: int | None
    replaces_tag: str | None


# One row per release (the caller keeps the newest change of each): an event older than the
# stored state changes nothing, and a deleted release stays deleted.
TRACK = """INSERT INTO gateway.rollouts AS r
               (release_id, repo_id, tag, replaces_release_id, replaces_tag, state, decided_at)
           SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[],
                                $5::text[], $6::text[], $7::timestamptz[])
           ON CONFLICT (release_id) DO UPDATE
              SET repo_id = EXCLUDED.repo_id, tag = EXCLUDED.tag,
                  replaces_release_id = EXCLUDED.replaces_release_id,
                  replaces_tag = EXCLUDED.replaces_tag, state = EXCLUDED.state,
                  decided_at = EXCLUDED.decided_at
            WHERE r.state <> 'deleted' AND r.decided_at <= EXCLUDED.decided_at"""


async def track(db: Queryable, changes: Sequence[RolloutChange]) -> None:
    await db.execute(
        TRACK,
        [c.release_id for c in changes],
        [c.repo_id for c in changes],
        [c.tag for c in changes],
        [c.replaces_release_id for c in changes],
        [c.replaces_tag for c in changes],
        [c.state for c in changes],
        [c.decided_at for c in changes],
    )


# The round is taken when it is due, by whichever replica's statement comes first: the others
# wait for its row lock and then find it no longer due. A round due further away than twice the
# interval (the interval was shortened meanwhile) is due now.
TAKE_ROUND = """INSERT INTO gateway.health_rounds AS h (plugin, next_round_at, rounds)
                VALUES ($1, now() + make_interval(secs => $2), 1)
                ON CONFLICT (plugin) DO UPDATE
                   SET next_round_at = EXCLUDED.next_round_at, rounds = h.rounds + 1
                 WHERE h.next_round_at <= now()
                    OR h.next_round_at > now() + make_interval(secs => 2 * $2)
                RETURNING rounds"""


async def take_round(db: Queryable, plugin: str, interval: float) -> bool:
    """Whether this replica takes `plugin`'s due round (the next one is due in `interval`)."""
    return await db.fetchval(TAKE_ROUND, plugin, interval) is not None


async def running_rollouts(db: Queryable) -> list[RunningRollout]:
    """The running plans, with their repositories' names now (a rename or a transfer since the
    event is followed; a deleted repository drops out)."""
    rows = await db.fetch(
        """SELECT r.release_id, r.repo_id, o.name AS owner, p.name AS repo, r.tag,
                  r.replaces_release_id, r.replaces_tag
             FROM gateway.rollouts r
             JOIN core.repositories p ON p.id = r.repo_id
             JOIN core.accounts o ON o.id = p.owner_id
            WHERE r.state = 'running'
            ORDER BY r.release_id"""
    )
    return [RunningRollout(**dict(row)) for row in rows]


async def store_figures(
    conn: Conn, release_id: int, repo_id: int, plugin: str, sessions: int, crashed: int
) -> tuple[int, int] | None:
    """Store a release's figures from `plugin` (they are the newest now); the figures it had
    before from any plugin, or None. Raises ForeignKeyViolationError for a deleted release."""
    before = await conn.fetchrow(
        """SELECT sessions, crashed_sessions FROM core.plugin_release_health
            WHERE release_id = $1 FOR UPDATE""",
        release_id,
    )
    await conn.execute(
        """INSERT INTO core.plugin_release_health
               (release_id, repo_id, plugin, sessions, crashed_sessions)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (release_id) DO UPDATE
              SET repo_id = $2, plugin = $3, sessions = $4, crashed_sessions = $5,
                  updated_at = now()""",
        release_id,
        repo_id,
        plugin,
        sessions,
        crashed,
    )
    return None if before is None else (before["sessions"], before["crashed_sessions"])
