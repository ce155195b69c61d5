"""Rollout plans (docs/rollouts.md): the percentage rises by the plan on its own, once per step;
the plan's API checks what it is given, and shows the state to readers and the figures to
publishers only; pause, resume, jump and finish."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from forge_common.config import ConfigError, Settings
from forge_releases.options import Options, with_settings
from forge_testing.waiting import eventually

from .rollout_support import (
    API,
    FAST_PLANS,
    FEEDS,
    NO_GATES,
    advances_of,
    auth,
    plan_state,
    release_ids,
    steps,
    world,
)


async def staging(client: Any) -> Any:
    resp = await client.get(f"{FEEDS}/electron/latest-linux.yml", headers=auth("owner"))
    return (await resp.json(content_type=None)).get("stagingPercentage")


async def test_the_percentage_rises_by_the_plan_once_per_step(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    plan = {"steps": steps(5, 25, 50, 100), "gates": NO_GATES}
    resp = await client.put(f"{API}/{new}/rollout_plan", json=plan, headers=auth("owner"))
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert (body["state"], body["step"], body["percent"]) == ("running", 0, 5)
    seen: list[Any] = []

    async def done() -> bool:
        percent = await staging(client)
        if not seen or seen[-1] != percent:
            seen.append(percent)
        return (await plan_state(client, new))["state"] == "done"

    await eventually(done, within=20)
    assert seen == [5, 25, 50, None]  # None: 100 %, every install
    assert await advances_of(db, new) == [
        ("planned", 0, 5),
        ("advanced", 1, 25),
        ("advanced", 2, 50),
        ("advanced", 3, 100),
        ("done", 3, 100),
    ]
    kinds = await db.fetchrow(
        "SELECT jsonb_typeof(steps) AS steps, jsonb_typeof(gates) AS gates "
        "FROM releases.rollout_plans WHERE release_id = $1",
        new,
    )
    assert tuple(kinds) == ("array", "object")  # stored as JSON, readable in SQL
    release = await (await client.get(f"{API}/v1.1.0", headers=auth("owner"))).json()
    assert release["rollout"] == 100  # the release object says what the plan set
    state = await plan_state(client, new)
    assert (state["percent"], state["rollout"]) == (100, None)
    assert state["reason"].startswith("Done: step 4 of 4 (100 %) was held its full time")
    # each step was held at least its hold time, measured from the plan's own history
    times = await db.fetch(
        "SELECT at FROM releases.rollout_events WHERE release_id = $1 ORDER BY id", new
    )
    gaps = [(b["at"] - a["at"]).total_seconds() for a, b in pairwise(times)]
    assert all(gap >= 1 for gap in gaps), gaps


async def test_the_plan_api_checks_its_input(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    path = f"{API}/{new}/rollout_plan"
    bad: list[Any] = [
        {},
        {"steps": []},
        {"steps": [{"percent": 0, "hold_seconds": 1}]},
        {"steps": [{"percent": 10, "hold_seconds": 0}]},
        {"steps": [{"percent": 10}]},
        {"steps": steps(50, 20)},
        {"steps": steps(10), "on_failure": "explode"},
        {"steps": steps(10), "gates": {"uptake": {"min_share": 2}}},
        {"steps": steps(10), "gates": {"nonsense": {}}},
        {"steps": steps(10), "gates": []},
        {"steps": steps(1, 2, 3)},  # below the release's 5 % already offered
        {"steps": [{"percent": 10, "hold_seconds": 1, "min_installs": -1}]},
    ]
    for body in bad:
        resp = await client.put(path, json=body, headers=auth("owner"))
        assert resp.status == 422, (body, await resp.text())
        assert (await resp.json())["error"]["code"] == "ValidationFailed"
    resp = await client.put(path, data=b"{not json", headers=auth("owner"))
    assert resp.status == 400
    assert (await client.get(path, headers=auth("owner"))).status == 404  # no plan yet
    # a release already offered to everyone has nothing to roll out
    old = (await release_ids(client))["v1.0.0"]
    resp = await client.put(
        f"{API}/{old}/rollout_plan", json={"steps": steps(10)}, headers=auth("owner")
    )
    assert resp.status == 422


async def test_strangers_readers_and_publishers(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    path = f"{API}/{new}/rollout_plan"
    plan = {"steps": steps(5, 50, hold=3600)}
    assert (await client.put(path, json=plan, headers=auth("reader"))).status == 403
    assert (await client.put(path, json=plan, headers=auth("stranger"))).status == 404
    assert (await client.put(path, json=plan)).status == 401
    assert (await client.put(path, json=plan, headers=auth("owner"))).status == 200
    # a stranger learns nothing: the same 404 as a repository that does not exist
    stranger = await client.get(path, headers=auth("stranger"))
    missing = await client.get(
        f"/api/v2/repos/owner/nothing/releases/{new}/rollout_plan", headers=auth("stranger")
    )
    assert stranger.status == missing.status == 404
    errors = [(await r.json())["error"] for r in (stranger, missing)]
    assert [(e["code"], e["message"]) for e in errors] == [
        ("RepoNotFound", "Repository not found")
    ] * 2
    for action in ("pause", "resume", "finish"):
        resp = await client.post(f"{path}/{action}", headers=auth("reader"))
        assert resp.status == 403
    health = {"sessions": 10, "crashed_sessions": 1}
    resp = await client.post(f"{API}/{new}/health", json=health, headers=auth("reader"))
    assert resp.status == 403
    read = await plan_state(client, new, "reader")
    assert read["state"] == "running" and read["step"] == 0
    assert "gates" not in read and "history" not in read  # figures are the publishers'
    full = await plan_state(client, new)
    assert full["gates"]["uptake"]["min_share"] == 0.5  # defaults filled in
    assert full["gates"]["external"]["enabled"] is True
    assert [h["decision"] for h in full["history"]] == ["planned"]


async def test_pause_resume_jump_and_finish(make_client: Any, load: Any, db: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    path = f"{API}/{new}/rollout_plan"
    plan = {"steps": steps(5, 20, 60, hold=3600), "gates": NO_GATES}
    assert (await client.put(path, json=plan, headers=auth("owner"))).status == 200
    paused = await client.post(f"{path}/pause", headers=auth("owner"))
    assert (await paused.json())["state"] == "paused"
    assert (await client.post(f"{path}/pause", headers=auth("owner"))).status == 409
    jumped = await client.post(f"{path}/jump", json={"step": 1}, headers=auth("owner"))
    body = await jumped.json()
    assert (body["state"], body["step"], body["percent"]) == ("running", 1, 20)
    assert await staging(client) == 20
    back = await client.post(f"{path}/jump", json={"step": 0}, headers=auth("owner"))
    assert back.status == 422  # a percentage only rises
    assert (
        await client.post(f"{path}/jump", json={"step": 9}, headers=auth("owner"))
    ).status == 422
    await client.post(f"{path}/pause", headers=auth("owner"))
    resumed = await client.post(f"{path}/resume", headers=auth("owner"))
    assert (await resumed.json())["state"] == "running"
    finished = await client.post(f"{path}/finish", headers=auth("owner"))
    body = await finished.json()
    assert (body["state"], body["percent"]) == ("done", 100)
    assert body["reason"] == "Finished by owner: the release is offered to every install"
    assert await staging(client) is None
    assert [kind for kind, _, _ in await advances_of(db, new)] == [
        "planned", "paused", "jumped", "paused", "resumed", "finished"
    ]  # fmt: skip
    outbox = await db.fetch(
        "SELECT payload FROM core.outbox WHERE type = 'release.rollout.changed' "
        "ORDER BY occurred_at"
    )
    assert [row["payload"]["decision"] for row in outbox][-1] == "finished"


def test_the_evaluation_interval_is_a_setting() -> None:
    """ROLLOUT_EVALUATION_SECONDS (docs/rollouts.md "Many replicas"), read in the one place."""
    env = {"DATABASE_URL": "postgresql://x/y"}
    assert with_settings(Options(), Settings.from_env(env)).rollout_interval == 10.0
    quick = Settings.from_env({**env, "ROLLOUT_EVALUATION_SECONDS": "0.2"})
    assert with_settings(Options(), quick).rollout_interval == 0.2
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ConfigError, match="ROLLOUT_EVALUATION_SECONDS"):
            Settings.from_env({**env, "ROLLOUT_EVALUATION_SECONDS": bad})
