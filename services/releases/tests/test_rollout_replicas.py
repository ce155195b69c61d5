"""One time source for many replicas (docs/rollouts.md "Many replicas"): two replicas evaluate
the same plan, one of them stops mid-plan and another starts; every step is taken exactly once,
each held its full time. A replica that starts after all were down past several due times takes
one step, never one per missed interval."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from aiohttp.test_utils import TestClient
from forge_common.config import Settings
from forge_releases.service import create_app
from forge_testing.waiting import eventually

from .rollout_support import (
    API,
    FAST_PLANS,
    NO_GATES,
    advances_of,
    auth,
    plan_state,
    release_ids,
    steps,
    world,
)

Client = TestClient[Any, Any]


async def replica(settings: Settings, aiohttp_client: Any) -> Client:
    client: Client = await aiohttp_client(create_app(settings, FAST_PLANS))
    return client


async def test_two_replicas_and_a_restart_take_each_step_once(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    a = await replica(settings, aiohttp_client)
    b = await replica(settings, aiohttp_client)
    new = (await release_ids(a))["v1.1.0"]
    plan = {"steps": steps(5, 20, 40, 60, 100), "gates": NO_GATES}
    assert (
        await a.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    ).status == 200

    async def at_step(n: int) -> bool:
        return (await plan_state(b, new))["step"] >= n

    await eventually(lambda: at_step(2), within=10)
    await a.close()  # a replica goes away mid-plan
    c = await replica(settings, aiohttp_client)  # and one starts

    async def done() -> bool:
        return (await plan_state(c, new))["state"] == "done"

    await eventually(done, within=15)
    assert await advances_of(db, new) == [
        ("planned", 0, 5),
        ("advanced", 1, 20),
        ("advanced", 2, 40),
        ("advanced", 3, 60),
        ("advanced", 4, 100),
        ("done", 4, 100),
    ]
    # the audit log says the same: one entry per decision, the steps by the system
    audit = await db.fetch(
        "SELECT kind, actor, changes FROM core.audit_log WHERE kind LIKE 'rollout_plan.%' "
        "ORDER BY id"
    )
    assert [(row["kind"], row["actor"], row["changes"]["step"]["after"]) for row in audit] == [
        ("rollout_plan.planned", "owner", 0),
        ("rollout_plan.advanced", None, 1),
        ("rollout_plan.advanced", None, 2),
        ("rollout_plan.advanced", None, 3),
        ("rollout_plan.advanced", None, 4),
        ("rollout_plan.done", None, 4),
    ]
    times = await db.fetch(
        "SELECT at FROM releases.rollout_events WHERE release_id = $1 ORDER BY id", new
    )
    gaps = [(later["at"] - earlier["at"]).total_seconds() for earlier, later in pairwise(times)]
    assert all(gap >= 1 for gap in gaps), gaps  # each step held its hold time


async def test_a_replica_back_after_a_long_outage_takes_one_step(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    a = await replica(settings, aiohttp_client)
    new = (await release_ids(a))["v1.1.0"]
    plan = {"steps": steps(5, 20, 40, 100, hold=60), "gates": NO_GATES}
    await a.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    await a.close()
    # every replica was down for an hour: the plan's step and due time lie far behind
    await db.execute(
        """UPDATE releases.rollout_plans
              SET step_started_at = now() - interval '1 hour', due_at = now() - interval '1 hour'
            WHERE release_id = $1""",
        new,
    )
    b = await replica(settings, aiohttp_client)

    async def moved() -> bool:
        state = await plan_state(b, new)
        return state["step"] == 1 and state["reason"].startswith("Holding")

    await eventually(moved, within=10)
    state = await plan_state(b, new)
    assert (state["state"], state["percent"]) == ("running", 20)
    assert state["reason"].startswith("Holding step 2 of 4 (20 %): the next decision in")
    assert await advances_of(db, new) == [("planned", 0, 5), ("advanced", 1, 20)]


async def test_a_plan_that_cannot_be_evaluated_holds_up_no_other(
    settings: Settings, aiohttp_client: Any, load: Any, db: Any, caplog: Any
) -> None:
    """A plan whose evaluation fails (here a step the plan does not have) is logged and put
    off; the evaluator goes on deciding the others."""
    await load(world())
    a = await replica(settings, aiohttp_client)
    ids = await release_ids(a)
    new = ids["v1.1.0"]
    plan = {"steps": steps(5, 100, hold=1), "gates": NO_GATES}
    await a.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    await a.close()
    broken = await db.fetchval(
        """INSERT INTO releases.releases (repo_id, tag, draft, rollout, created_at)
           SELECT repo_id, 'v1.0.1', false, 5, now() FROM releases.releases WHERE id = $1
           RETURNING id""",
        new,
    )
    await db.execute(
        """INSERT INTO releases.rollout_plans
               (release_id, repo_id, steps, gates, on_failure, state, step, due_at, summary)
           SELECT $1, repo_id, steps, gates, on_failure, 'running', 7, now() - interval '1 hour',
                  'broken'
             FROM releases.rollout_plans WHERE release_id = $2""",
        broken,
        new,
    )
    b = await replica(settings, aiohttp_client)

    async def done() -> bool:
        return (await plan_state(b, new))["state"] == "done"

    await eventually(done, within=10)
    due = await db.fetchval(
        "SELECT due_at - now() FROM releases.rollout_plans WHERE release_id = $1", broken
    )
    assert due.total_seconds() > 0  # put off, not retried at every round
    assert f"could not evaluate the rollout plan of release {broken}" in caplog.text
