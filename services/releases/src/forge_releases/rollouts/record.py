"""How a plan's decision is made known, in the transaction that takes it: a row of the plan's
history (`releases.rollout_events`), a row of the audit log, and a `release.rollout.changed`
event to plugins (the outbox). Every decision, the evaluator's and the publishers', goes here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forge_common.db import Conn
from forge_common.outbox import Event, emit

from ..publish.events import SOURCE
from . import audit, queries
from .audit import Actor
from .queries import PlanRow

EVENT_TYPE = "release.rollout.changed"


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # planned advanced halted paused resumed jumped finished done withdrawn
    state: str
    step: int
    percent: int
    summary: str
    detail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)


async def _payload(conn: Conn, plan: PlanRow, decision: Decision, actor_id: int | None) -> Any:
    """The event's payload (release.* fields, docs/rollouts.md "Events"), its org id and the
    audit log's target."""
    row = await conn.fetchrow(
        """SELECT o.name AS owner, r.name, CASE WHEN o.kind = 'org' THEN o.id END AS org_id
             FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
            WHERE r.id = $1""",
        plan.repo_id,
    )
    assert row is not None  # the plan's row references the repository
    # the release the new one is measured against: the gateway asks plugins about both
    replaced = await queries.replaced_release(conn, plan.release_id)
    payload = {
        "repo_id": plan.repo_id,
        "owner": row["owner"],
        "repo": row["name"],
        "full_name": f"{row['owner']}/{row['name']}",
        "release_id": plan.release_id,
        "tag": plan.tag,
        "draft": plan.draft,
        "prerelease": plan.prerelease,
        "actor_id": actor_id,
        "decision": decision.kind,
        "state": decision.state,
        "step": decision.step,
        "percent": decision.percent,
        "reason": decision.summary,
        "detail": decision.detail,
        "replaces_release_id": None if replaced is None else replaced[0],
        "replaces_tag": None if replaced is None else replaced[1],
    }
    return payload, row["org_id"], f"{row['owner']}/{row['name']}@{plan.tag}"


async def record(conn: Conn, plan: PlanRow, decision: Decision, actor: Actor) -> None:
    await queries.add_event(
        conn, plan.release_id, decision.kind, decision.step, decision.percent, actor.id,
        decision.summary, decision.detail, decision.figures,
    )  # fmt: skip
    payload, org_id, target = await _payload(conn, plan, decision, actor.id)
    changes: dict[str, tuple[Any, Any]] = {
        "state": (plan.state, decision.state),
        "step": (plan.step, decision.step),
        "percent": (plan.rollout, decision.percent),
        "reason": (plan.summary, decision.summary),
    }
    if decision.detail:
        changes["detail"] = (plan.detail, decision.detail)
    await audit.record_decision(
        conn, actor, target=target, repo_id=plan.repo_id, kind=decision.kind, changes=changes
    )
    await emit(
        conn,
        Event(
            type=EVENT_TYPE,
            source=SOURCE,
            payload=payload,
            repo_id=plan.repo_id,
            org_id=org_id,
            actor_id=actor.id,
        ),
    )
