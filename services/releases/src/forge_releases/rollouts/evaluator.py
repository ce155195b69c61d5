"""The evaluator: every replica runs one; each running plan whose `due_at` has come is taken by
exactly one of them (FOR UPDATE SKIP LOCKED, as the outbox relay claims its rows) and decided in
the transaction that moves `due_at` on. So a plan advances once per due time whatever the number
of replicas, a crash mid-decision rolls back (the row is due again), and a replica that was down
finds the row due and decides it once: a step is held its full time from when it began, never
skipped to catch up (docs/rollouts.md "Many replicas").

Each evaluation checks the gates; a failed gate halts the plan (or withdraws the release when the
plan says so). Otherwise the plan advances when the step has been held `hold_seconds` and
`min_installs` downloads were counted; the last step's end is `done`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import datetime

import asyncpg
from aiohttp import web
from forge_common import tasks
from forge_common.db import Conn, transaction
from forge_common.keys import DB_POOL

from ..keys import OPTIONS, RELEASE_CACHE
from . import queries, withdraw
from .audit import SYSTEM
from .gates import Figures, Verdict, measure
from .queries import PlanRow
from .record import Decision, record

log = logging.getLogger(__name__)


def step_name(plan: PlanRow, step: int) -> str:
    return f"step {step + 1} of {len(plan.steps)} ({plan.steps[step]['percent']} %)"


async def _halt(conn: Conn, plan: PlanRow, failed: Verdict, figures: Figures) -> Decision:
    percent = plan.steps[plan.step]["percent"]
    gate = "update-uptake" if failed.gate == "uptake" else "external-signal"
    summary = f"Halted at {step_name(plan, plan.step)}: the {gate} gate failed"
    kind = "halted"
    if plan.on_failure == "withdraw":
        if await withdraw.withdraw_release(conn, plan, f"{summary}: {failed.detail}"):
            kind, summary = "withdrawn", f"{summary}; the release was withdrawn"
        else:
            summary = f"{summary}; withdrawal is not available, so it is only halted"
    await queries.set_state(
        conn, plan.release_id, state="halted", step=plan.step, new_step=False, due_in=None,
        summary=summary, detail=failed.detail,
    )  # fmt: skip
    return Decision(kind, "halted", plan.step, percent, summary, failed.detail, figures.as_json())


async def _move_on(conn: Conn, plan: PlanRow, figures: Figures, interval: float) -> Decision:
    """The step was held long enough and the gates pass: the next step, or done."""
    details = "; ".join(f"{v.gate}: {v.detail}" for v in figures.verdicts)
    last = plan.step + 1 >= len(plan.steps)
    if last:
        percent = plan.steps[plan.step]["percent"]
        summary = (
            f"Done: {step_name(plan, plan.step)} was held its full time with the gates passing"
        )
        await queries.set_state(
            conn, plan.release_id, state="done", step=plan.step, new_step=False, due_in=None,
            summary=summary, detail=details,
        )  # fmt: skip
        return Decision("done", "done", plan.step, percent, summary, details, figures.as_json())
    step = plan.step + 1
    percent = plan.steps[step]["percent"]
    summary = (f"Advanced to {step_name(plan, step)}: {step_name(plan, plan.step)} was held "
               "its full time with the gates passing")  # fmt: skip
    await queries.set_rollout(conn, plan.release_id, percent)
    await queries.set_state(
        conn, plan.release_id, state="running", step=step, new_step=True,
        due_in=min(interval, plan.steps[step]["hold_seconds"]), summary=summary, detail=details,
    )  # fmt: skip
    return Decision("advanced", "running", step, percent, summary, details, figures.as_json())


async def _hold(conn: Conn, plan: PlanRow, summary: str, detail: str, due_in: float) -> None:
    await queries.set_state(
        conn, plan.release_id, state="running", step=plan.step, new_step=False, due_in=due_in,
        summary=summary, detail=detail,
    )  # fmt: skip


async def evaluate(conn: Conn, plan: PlanRow, now: datetime, interval: float) -> Decision | None:
    """Decide one due plan; the decision to record, or None when it only keeps holding."""
    if plan.draft:  # the hold starts when it is published
        await queries.set_state(
            conn, plan.release_id, state="running", step=plan.step, new_step=True,
            due_in=interval, summary="Waiting: the release is a draft; the plan starts when it "
            "is published", detail="",
        )  # fmt: skip
        return None
    if plan.withdrawn:  # by a publisher, meanwhile
        summary = f"Halted at {step_name(plan, plan.step)}: the release was withdrawn"
        await queries.set_state(
            conn, plan.release_id, state="halted", step=plan.step, new_step=False, due_in=None,
            summary=summary, detail="",
        )  # fmt: skip
        return Decision("halted", "halted", plan.step, plan.steps[plan.step]["percent"], summary)
    figures = await measure(conn, plan, now)
    failed = figures.failed()
    if failed is not None:
        return await _halt(conn, plan, failed, figures)
    step = plan.steps[plan.step]
    details = "; ".join(f"{v.gate}: {v.detail}" for v in figures.verdicts)
    left = step["hold_seconds"] - (now - plan.step_started_at).total_seconds()
    if left > 0:
        summary = f"Holding {step_name(plan, plan.step)}: the next decision in {left:.0f} s"
        await _hold(conn, plan, summary, details, min(interval, left))
        return None
    if figures.installs < step["min_installs"]:
        summary = (f"Holding {step_name(plan, plan.step)}: {figures.installs} of "
                   f"{step['min_installs']} installs counted")  # fmt: skip
        await _hold(conn, plan, summary, details, interval)
        return None
    return await _move_on(conn, plan, figures, interval)


# what a database outage raises: the round is given up and tried again after the interval
# (InternalClientError: the server ended the connection in the middle of a round's statements)
_DOWN = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
# a plan whose evaluation failed otherwise (a bug) is put off this many intervals, so the other
# due plans are decided meanwhile and the log is not flooded
POSTPONED_INTERVALS = 30


async def _decide(conn: Conn, plan: PlanRow, interval: float) -> Decision | None:
    now = await conn.fetchval("SELECT now()")
    try:
        async with conn.transaction():  # a savepoint: a failed evaluation leaves nothing behind
            decision = await evaluate(conn, plan, now, interval)
            if decision is not None:
                await record(conn, plan, decision, SYSTEM)
    except _DOWN:
        raise
    except Exception:
        log.exception("could not evaluate the rollout plan of release %d", plan.release_id)
        await queries.postpone(conn, plan.release_id, interval * POSTPONED_INTERVALS)
        return None
    return decision


async def evaluate_one(app: web.Application) -> bool:
    """Take one due plan and decide it; False when none was due (or all are being decided)."""
    interval = app[OPTIONS].rollout_interval
    async with transaction(app[DB_POOL]) as conn:
        plans = await queries.claim_due(conn, 1)
        if not plans:
            return False
        plan = plans[0]
        decision = await _decide(conn, plan, interval)
    if decision is not None:
        app[RELEASE_CACHE].invalidate_repo(plan.repo_id)
        log.info("rollout of release %d: %s", plan.release_id, decision.summary)
    return True


async def _run(app: web.Application, stopping: asyncio.Event) -> None:
    interval = app[OPTIONS].rollout_interval
    while not stopping.is_set():
        try:
            while not stopping.is_set() and await evaluate_one(app):
                pass
        except _DOWN as exc:
            log.warning("could not evaluate rollout plans yet: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), interval)


# how long a stopping replica lets a decision in progress finish before it cancels it
STOP_GRACE = 5.0


async def evaluator_context(app: web.Application) -> AsyncIterator[None]:
    """The evaluator is asked to stop and finishes the decision it is taking: cancelling it
    inside its transaction could leave the pooled connection in the middle of a statement
    (docs/decisions.md "Stopping a background task"); one that takes longer is cancelled."""
    stopping = asyncio.Event()
    task = asyncio.create_task(_run(app, stopping), name="releases-rollout-evaluator")
    yield
    stopping.set()
    await asyncio.wait({task}, timeout=STOP_GRACE)
    await tasks.stop(task)
