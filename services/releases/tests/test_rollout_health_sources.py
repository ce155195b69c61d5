"""The external-signal gate's figures come two ways (docs/rollouts.md "From a plugin"): posted to
the health endpoint (releases.release_health) or reported by a plugin through the gateway
(core.plugin_release_health). The newest of a release's figures is what the gate reads, and a
plugin's figures go with their release."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from forge_releases.rollouts import queries

WORLD = {
    "users": [{"name": "fay"}],
    "repos": [{"owner": "fay", "name": "app", "releases": [{"tag": "v1.0.0"}]}],
}


async def _plugin_reports(db: Any, release_id: int, sessions: int, crashed: int) -> None:
    await db.execute(
        """INSERT INTO core.plugin_release_health
               (release_id, repo_id, plugin, sessions, crashed_sessions)
           SELECT id, repo_id, 'crash-figures', $2, $3 FROM releases.releases WHERE id = $1
           ON CONFLICT (release_id) DO UPDATE
              SET sessions = $2, crashed_sessions = $3, updated_at = now()""",
        release_id,
        sessions,
        crashed,
    )


async def test_the_newest_figures_win_whichever_way_they_came(load: Any, db: Any) -> None:
    await load(WORLD)
    release_id = await db.fetchval("SELECT id FROM releases.releases")
    assert await queries.health_of(db, release_id) is None
    await _plugin_reports(db, release_id, 1000, 5)
    assert await queries.health_of(db, release_id) == (1000, 5)
    await queries.put_health(db, release_id, 2000, 7)  # a CI posts later
    assert await queries.health_of(db, release_id) == (2000, 7)
    await _plugin_reports(db, release_id, 3000, 9)  # the plugin's next round
    assert await queries.health_of(db, release_id) == (3000, 9)


async def test_a_plugins_figures_go_with_their_release(load: Any, db: Any) -> None:
    await load(WORLD)
    release_id = await db.fetchval("SELECT id FROM releases.releases")
    await _plugin_reports(db, release_id, 1000, 5)
    await db.execute("DELETE FROM releases.releases WHERE id = $1", release_id)
    assert await db.fetchval("SELECT count(*) FROM core.plugin_release_health") == 0
    with pytest.raises(asyncpg.ForeignKeyViolationError):  # no figures for a missing release
        await db.execute(
            """INSERT INTO core.plugin_release_health
                   (release_id, repo_id, plugin, sessions, crashed_sessions)
               SELECT $1, id, 'crash-figures', 1, 0 FROM core.repositories""",
            release_id,
        )
