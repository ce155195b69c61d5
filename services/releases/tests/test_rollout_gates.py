"""The health gates of a rollout plan (docs/rollouts.md "Gates"): a share of installs stuck on the
old version halts the plan at the next evaluation, as do crash figures of the new release worse
than the old one's; a halted plan's percentage stays where it was (no new installs offered); a
gate without figures does not block."""

from __future__ import annotations

import re
from typing import Any

from forge_testing.waiting import eventually

from .rollout_support import (
    API,
    FAST_PLANS,
    FEEDS,
    UPDATE,
    advances_of,
    auth,
    plan_state,
    release_ids,
    steps,
    world,
)

UPTAKE_ONLY = {
    "uptake": {"window_seconds": 0, "min_checks": 10, "min_share": 0.5},
    "external": {"enabled": False},
}


async def check(client: Any, version: str, times: int) -> None:
    """`times` update checks of installs running `version` (the spec's check says it)."""
    for _ in range(times):
        resp = await client.get(
            UPDATE, params={"version": version, "platform": "linux"}, headers=auth("owner")
        )
        assert resp.status in (200, 204)


async def staging(client: Any) -> Any:
    resp = await client.get(f"{FEEDS}/electron/latest-linux.yml", headers=auth("owner"))
    return (await resp.json(content_type=None)).get("stagingPercentage")


async def halted(client: Any, release_id: int) -> bool:
    return (await plan_state(client, release_id))["state"] == "halted"


async def test_installs_stuck_on_the_old_version_halt_the_plan(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    plan = {"steps": steps(10, 50, 100, hold=3600), "gates": UPTAKE_ONLY}
    resp = await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    assert resp.status == 200
    await check(client, "1.1.0", 3)  # took it
    await check(client, "1.0.0", 12)  # offered it, still on the old version

    await eventually(lambda: halted(client, new), within=10)
    state = await plan_state(client, new)
    assert (state["step"], state["percent"]) == (0, 10)
    # it halts at the first evaluation that counted enough checks (min_checks)
    halt = state["history"][-1]
    uptake = halt["figures"]["gates"]["uptake"]
    total = uptake["running"] + uptake["offered"]
    assert total >= 10 and uptake["share"] < 0.5, uptake
    assert state["reason"] == (
        "Halted at step 1 of 3 (10 %): the update-uptake gate failed "
        f"({uptake['running']} of {total} checks run the new version "
        f"({uptake['share'] * 100:.1f} %), below 50.0 %)"
    )
    assert await staging(client) == 10  # frozen: nobody outside the 10 % is offered it
    assert [kind for kind, _, _ in await advances_of(db, new)] == ["planned", "halted"]
    event = await db.fetchval(
        "SELECT payload FROM core.outbox WHERE type = 'release.rollout.changed' "
        "ORDER BY occurred_at DESC LIMIT 1"
    )
    assert (event["decision"], event["state"], event["percent"]) == ("halted", "halted", 10)
    # readers see that it halted and why, not the figures
    read = await plan_state(client, new, "reader")
    assert read["reason"] == "Halted at step 1 of 3 (10 %): the update-uptake gate failed"


async def test_a_healthy_uptake_passes(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    plan = {"steps": steps(10, 100, hold=3600), "gates": UPTAKE_ONLY}
    await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    await check(client, "1.1.0", 15)
    await check(client, "1.0.0", 5)

    async def measured() -> bool:
        state = await plan_state(client, new)
        return "uptake: 15 of 20 checks run the new version (75.0 %), at least" in state["reason"]

    await eventually(measured, within=10)
    assert (await plan_state(client, new))["state"] == "running"


async def test_crash_figures_worse_than_the_old_release_halt_the_plan(
    make_client: Any, load: Any
) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    ids = await release_ids(client)
    new, old = ids["v1.1.0"], ids["v1.0.0"]
    plan = {"steps": steps(10, 100, hold=3600)}  # default gates: both on
    await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    for release_id, crashed in ((old, 5), (new, 90)):
        figures = {"sessions": 1000, "crashed_sessions": crashed}
        resp = await client.post(f"{API}/{release_id}/health", json=figures, headers=auth("owner"))
        assert resp.status == 204
    await eventually(lambda: halted(client, new), within=10)
    state = await plan_state(client, new)
    assert state["reason"] == (
        "Halted at step 1 of 2 (10 %): the external-signal gate failed (crash-free sessions "
        "91.0 % against 99.5 % for the release it replaces: down by more than 1.0 %)"
    )
    assert await staging(client) == 10


async def test_the_health_endpoint_checks_its_input(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    path = f"{API}/{new}/health"
    for bad in (
        {},
        {"sessions": 10},
        {"sessions": -1, "crashed_sessions": 0},
        {"sessions": 10, "crashed_sessions": 11},
        {"sessions": "10", "crashed_sessions": 1},
    ):
        resp = await client.post(path, json=bad, headers=auth("owner"))
        assert resp.status == 422, bad
    resp = await client.post(
        f"{API}/999999/health", json={"sessions": 1, "crashed_sessions": 0}, headers=auth("owner")
    )
    assert resp.status == 404


async def test_gates_without_figures_do_not_block(make_client: Any, load: Any) -> None:
    """Default gates, no checks counted and no figures posted: the plan runs to its end."""
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    await client.put(
        f"{API}/{new}/rollout_plan", json={"steps": steps(10, 30)}, headers=auth("owner")
    )

    async def done() -> bool:
        return (await plan_state(client, new))["state"] == "done"

    await eventually(done, within=10)
    reason = (await plan_state(client, new))["reason"]
    assert "external: no figures yet" in reason
    assert "uptake: 0 of 0 checks run the new version (0.0 %); decides after 3600 s" in reason


async def test_withdraw_on_failure(make_client: Any, load: Any, db: Any) -> None:
    """`on_failure: withdraw`: the failing gate withdraws the release (release safety): no check
    offers it any more; the audit log records the plan's decision and the withdrawal."""
    await load(world())
    client = await make_client(options=FAST_PLANS)
    ids = await release_ids(client)
    new, old = ids["v1.1.0"], ids["v1.0.0"]
    plan = {"steps": steps(10, 100, hold=3600), "on_failure": "withdraw"}
    await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    for release_id, crashed in ((old, 0), (new, 500)):
        figures = {"sessions": 1000, "crashed_sessions": crashed}
        await client.post(f"{API}/{release_id}/health", json=figures, headers=auth("owner"))
    await eventually(lambda: halted(client, new), within=10)
    state = await plan_state(client, new)
    assert state["history"][-1]["decision"] == "withdrawn"
    assert "the release was withdrawn" in state["reason"]
    release = await (await client.get(f"{API}/{new}", headers=auth("owner"))).json()
    assert release["withdrawn"] is True
    offer = await client.get(
        UPDATE, params={"version": "1.0.0", "platform": "linux"}, headers=auth("owner")
    )
    assert offer.status == 204
    # an install that took it goes back, through a check that can roll back (release safety)
    back = await client.get(
        "/api/v2/repos/owner/app/update",
        params={"version": "1.1.0", "platform": "linux", "allow_downgrade": "true"},
        headers=auth("owner"),
    )
    assert back.status == 200 and (await back.json())["name"] == "v1.0.0"
    kinds = await db.fetch(
        "SELECT kind, actor, source FROM core.audit_log WHERE repo_id = $1 ORDER BY id",
        await db.fetchval("SELECT repo_id FROM releases.releases WHERE id = $1", new),
    )
    assert [(k["kind"], k["actor"], k["source"]) for k in kinds] == [
        ("rollout_plan.planned", "owner", "api"),
        ("release.withdrawn", None, "system"),
        ("rollout_plan.withdrawn", None, "system"),
    ]


async def test_insights_show_the_reach_per_step_and_the_gates(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    ids = await release_ids(client)
    new, old = ids["v1.1.0"], ids["v1.0.0"]
    plan = {"steps": steps(10, 30, hold=1) + steps(60, hold=3600), "gates": UPTAKE_ONLY}
    await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    for release_id, crashed in ((old, 10), (new, 12)):
        figures = {"sessions": 1000, "crashed_sessions": crashed}
        await client.post(f"{API}/{release_id}/health", json=figures, headers=auth("owner"))
    await check(client, "1.1.0", 3)

    async def at_60() -> bool:
        return (await plan_state(client, new))["percent"] == 60

    await eventually(at_60, within=10)
    page = await client.get("/owner/app/insights", headers=auth("owner"))
    assert page.status == 200
    html = await page.text()
    assert "<script" not in html
    assert f'id="rollout-reach-{new}-title">Rollout of v1.1.0: reach per step<' in html
    reach = html.split(f'<table id="rollout-reach-{new}-table">', 1)[1].split("</table>", 1)[0]
    assert [float(v) for v in re.findall(r">(\d+\.\d)<", reach)] == [10.0, 30.0, 60.0]
    gates = html.split(f'<table id="rollout-gates-{new}-table">', 1)[1].split("</table>", 1)[0]
    assert "Update uptake" in gates and "100.0 %" in gates and "50.0 %" in gates
    assert "Crash-free sessions" in gates and "98.8 %" in gates and "98.0 %" in gates
    assert html.count(f'aria-labelledby="rollout-gates-{new}-title"') == 1
