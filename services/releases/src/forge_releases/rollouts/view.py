"""A plan as the API and the console show it: everything for publishers, the state and the
reason's summary for readers (the figures come from insights, which only publishers see)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from forge_common.db import Queryable

from . import queries
from .queries import PlanRow


def _time(at: datetime | None) -> str | None:
    if at is None:
        return None
    return at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def plan_json(plan: PlanRow, history: list[dict[str, Any]], *, full: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "release_id": plan.release_id,
        "steps": plan.steps,
        "on_failure": plan.on_failure,
        "state": plan.state,
        "step": plan.step,  # the index in `steps`
        "percent": plan.rollout if plan.rollout is not None else 100,
        # the release's own `rollout` (PATCH's field, the column the feeds read): what the plan
        # set; null once every install is offered it
        "rollout": plan.rollout if plan.rollout is not None and plan.rollout < 100 else None,
        "reason": plan.summary,
        "started_at": _time(plan.started_at),
        "updated_at": _time(plan.updated_at),
    }
    if not full:
        return data
    if plan.detail:
        data["reason"] = f"{plan.summary} ({plan.detail})"
    data["gates"] = plan.gates
    data["step_started_at"] = _time(plan.step_started_at)
    data["next_evaluation_at"] = _time(plan.due_at)
    data["history"] = [
        {
            "at": _time(event["at"]),
            "decision": event["kind"],
            "step": event["step"],
            "percent": event["percent"],
            "actor_id": event["actor_id"],
            "reason": event["summary"],
            "detail": event["detail"],
            "figures": event["figures"],
        }
        for event in history
    ]
    return data


async def plan_context(db: Queryable, repo_id: int, release_id: int) -> dict[str, Any] | None:
    """The plan as its publishers see it (the console's page), or None."""
    plan = await queries.plan_of(db, repo_id, release_id)
    if plan is None:
        return None
    return plan_json(plan, await queries.events_of(db, release_id, limit=50), full=True)
