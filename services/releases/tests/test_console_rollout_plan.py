"""The rollout plan on the release's console page (docs/console.md): set, pause, resume, jump,
finish through forms (CSRF-checked), the halt explained, errors next to the field."""

from __future__ import annotations

from typing import Any

from forge_testing.waiting import eventually

from .console_support import field_error, signed_in
from .rollout_support import API, FAST_PLANS, auth, plan_state, release_ids, world

EDIT = "/owner/app/releases/edit/v1.1.0"


async def test_the_console_runs_a_plan(make_client: Any, load: Any, db: Any, settings: Any) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    new = (await release_ids(client))["v1.1.0"]
    async with await signed_in(client, db, settings, "owner") as browser:
        status, page = await browser.get(EDIT)
        assert status == 200 and "No plan: the rollout moves only when you raise it." in page
        bad = await browser.submit(f"{EDIT}/rollout-plan", {"plan_steps": "5 lots"}, page=page)
        assert bad.status == 422
        assert "write each step as a percentage" in field_error(await bad.text(), "plan_steps")
        steps = "10 3600\n50 3600\n100 3600"
        fields = {"plan_steps": steps, "gate_uptake": "on", "gate_external": "on"}
        reply = await browser.submit(f"{EDIT}/rollout-plan", fields, page=page)
        assert reply.status == 303
        assert reply.headers["Location"] == f"{EDIT}#rollout-plan"
        _, page = await browser.get(EDIT)
        assert 'id="plan-state">running<' in page and 'id="plan-percent">10%<' in page
        assert (await browser.submit(f"{EDIT}/rollout-plan/pause", {}, page=page)).status == 303
        _, page = await browser.get(EDIT)
        assert 'id="plan-state">paused<' in page and "Paused at step 1 of 3 (10 %) by owner" in page
        reply = await browser.submit(f"{EDIT}/rollout-plan/jump", {"step": "2"}, page=page)
        assert reply.status == 303
        assert (await plan_state(client, new))["percent"] == 50
        _, page = await browser.get(EDIT)
        again = await browser.submit(f"{EDIT}/rollout-plan/resume", {}, page=page)
        assert again.status == 409  # running again since the jump
        assert "only a paused or halted plan can be resumed" in await again.text()
        # a halt is explained on the page
        for release_id, crashed in (((await release_ids(client))["v1.0.0"], 0), (new, 400)):
            figures = {"sessions": 500, "crashed_sessions": crashed}
            await client.post(f"{API}/{release_id}/health", json=figures, headers=auth("owner"))

        async def halted() -> bool:
            return (await plan_state(client, new))["state"] == "halted"

        await eventually(halted, within=10)
        _, page = await browser.get(EDIT)
        assert 'id="plan-state">halted<' in page
        assert "the external-signal gate failed (crash-free sessions 20.0 % against 100.0 %" in page
        assert (await browser.submit(f"{EDIT}/rollout-plan/finish", {}, page=page)).status == 303
        assert (await plan_state(client, new))["state"] == "done"
    kinds = await db.fetch("SELECT kind, source FROM core.audit_log ORDER BY id")
    assert ("rollout_plan.planned", "console") in [(k["kind"], k["source"]) for k in kinds]


async def test_readers_and_forged_forms_change_nothing(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    await load(world())
    client = await make_client(options=FAST_PLANS)
    async with await signed_in(client, db, settings, "reader") as browser:
        status, _ = await browser.get(EDIT)
        assert status in (403, 404)
        reply = await browser.post(f"{EDIT}/rollout-plan", {"plan_steps": "10 60"})
        assert reply.status == 403  # no CSRF token of a page
    assert await db.fetchval("SELECT count(*) FROM releases.rollout_plans") == 0
