"""What publishers do to a plan (API and console alike): set it, pause, resume, jump to a step,
finish at once. Each locks the plan's row (the evaluator skips it meanwhile), records its
decision (record.py) and tells the caches."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from forge_common.db import Conn, transaction
from forge_common.errors import Conflict, Unprocessable
from forge_common.keys import DB_POOL

from ..errors import ReleaseNotFound, RolloutPlanNotFound
from ..keys import RELEASE_CACHE
from ..models import RepoRef
from ..publish import queries as publish_queries
from . import queries
from .audit import Actor
from .evaluator import step_name
from .plan import Plan
from .queries import PlanRow
from .record import Decision, record

Act = Callable[[PlanRow, str], tuple[Decision, float | None, bool]]


def _first_step(plan: Plan, rollout: int | None, draft: bool) -> int:
    """Where a new plan starts: its first step at or above the percentage installs may already
    have (a percentage only rises)."""
    if rollout is None and not draft:
        raise Unprocessable(
            "the release is already offered to every install: a plan needs a staged release "
            "(a draft, or a rollout below 100)", field="steps"
        )  # fmt: skip
    current = rollout or 0
    for index, step in enumerate(plan.steps):
        if step.percent >= current:
            return index
    raise Unprocessable(
        f"every step is below the release's rollout ({current} %): a percentage only rises",
        field="steps",
    )


async def set_plan(
    app: web.Application, ref: RepoRef, actor: Actor, release_id: int, plan: Plan
) -> None:
    async with transaction(app[DB_POOL]) as conn:
        release = await publish_queries.lock_release(conn, ref.repo_id, release_id)
        if release is None:
            raise ReleaseNotFound()
        step = _first_step(plan, release.rollout, release.draft)
        percent = plan.steps[step].percent
        summary = f"Plan set: starts at step {step + 1} of {len(plan.steps)} ({percent} %)"
        await queries.save_plan(
            conn, ref.repo_id, release_id, plan.steps_json(), plan.gates_json(),
            plan.on_failure, step, summary,
        )  # fmt: skip
        await queries.set_rollout(conn, release_id, percent)
        saved = await queries.plan_of(conn, ref.repo_id, release_id)
        assert saved is not None
        decision = Decision("planned", "running", step, percent, summary)
        await record(conn, saved, decision, actor)
    app[RELEASE_CACHE].invalidate_repo(ref.repo_id)


async def _locked(conn: Conn, ref: RepoRef, release_id: int) -> PlanRow:
    plan = await queries.plan_of(conn, ref.repo_id, release_id, lock=True)
    if plan is None:
        raise RolloutPlanNotFound()
    return plan


def _pause(plan: PlanRow, who: str) -> tuple[Decision, float | None, bool]:
    if plan.state != "running":
        raise Conflict(f"the plan is {plan.state}: only a running plan can be paused")
    summary = f"Paused at {step_name(plan, plan.step)} by {who}"
    return Decision("paused", "paused", plan.step, _percent(plan), summary), None, False


def _resume(plan: PlanRow, who: str) -> tuple[Decision, float | None, bool]:
    if plan.state not in ("paused", "halted"):
        raise Conflict(f"the plan is {plan.state}: only a paused or halted plan can be resumed")
    summary = (f"Resumed at {step_name(plan, plan.step)} by {who}: the step is held its full "
               "time again, with the gates checked")  # fmt: skip
    return Decision("resumed", "running", plan.step, _percent(plan), summary), 0.0, True


def _jump(step: int) -> Act:
    def jump(plan: PlanRow, who: str) -> tuple[Decision, float | None, bool]:
        if not 0 <= step < len(plan.steps):
            raise Unprocessable(f"step must be from 0 to {len(plan.steps) - 1}", field="step")
        if plan.steps[step]["percent"] < (plan.rollout or 0):
            raise Unprocessable(
                f"step {step + 1} is below the release's rollout ({plan.rollout} %): a "
                "percentage only rises", field="step"
            )  # fmt: skip
        summary = f"Jumped to {step_name(plan, step)} by {who}"
        decision = Decision("jumped", "running", step, plan.steps[step]["percent"], summary)
        return decision, 0.0, True

    return jump


def _finish(plan: PlanRow, who: str) -> tuple[Decision, float | None, bool]:
    summary = f"Finished by {who}: the release is offered to every install"
    return Decision("finished", "done", plan.step, 100, summary), None, False


def _percent(plan: PlanRow) -> int:
    return plan.rollout if plan.rollout is not None else 100


ACTIONS: dict[str, Act] = {"pause": _pause, "resume": _resume, "finish": _finish}


async def act(
    app: web.Application, ref: RepoRef, actor: Actor, release_id: int, action: str,
    step: int | None = None,
) -> None:  # fmt: skip
    """Pause, resume, jump (to `step`, 0-based) or finish the release's plan."""
    decide = _jump(step or 0) if action == "jump" else ACTIONS[action]
    async with transaction(app[DB_POOL]) as conn:
        plan = await _locked(conn, ref, release_id)
        decision, due_in, new_step = decide(plan, actor.name)
        if decision.percent != plan.rollout:
            await queries.set_rollout(conn, release_id, decision.percent)
        await queries.set_state(
            conn, release_id, state=decision.state, step=decision.step, new_step=new_step,
            due_in=due_in, summary=decision.summary, detail="",
        )  # fmt: skip
        await record(conn, plan, decision, actor)
    app[RELEASE_CACHE].invalidate_repo(ref.repo_id)
