"""The health gates (docs/rollouts.md "Gates"), each a rule with a threshold, checked at every
evaluation of a running plan. A gate without enough figures does not decide: it never blocks,
it waits.

- update uptake: of the checks since the plan started that were offered the new version by an
  install that said its version, or that ran the new version, the share running it (insights'
  hourly counts: no new data about anybody). An install whose update failed keeps checking in
  on the old version and is offered the new one again, so it lowers the share.
- external signal: crash-free sessions of the new release (1 - crashed / sessions, as posted to
  `.../health`) against those of the release it replaces; fails when it is lower by more than
  `max_drop`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from forge_common.db import Queryable

from ..insights.dimensions import version
from . import queries
from .plan import ExternalGate, UptakeGate, stored_plan
from .queries import PlanRow

PASS, FAIL, WAIT = "pass", "fail", "waiting"


@dataclass(frozen=True, slots=True)
class Verdict:
    gate: str
    status: str  # pass | fail | waiting
    detail: str
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Figures:
    """What one evaluation measured: each gate's verdict and the installs counted."""

    verdicts: tuple[Verdict, ...]
    installs: int

    def failed(self) -> Verdict | None:
        return next((v for v in self.verdicts if v.status == FAIL), None)

    def as_json(self) -> dict[str, Any]:
        gates = {
            v.gate: {"status": v.status, "detail": v.detail, **v.figures} for v in self.verdicts
        }
        return {"installs": self.installs, "gates": gates}


def _percent(share: float) -> str:
    return f"{share * 100:.1f} %"


def uptake_verdict(gate: UptakeGate, running: int, offered: int, elapsed: float) -> Verdict:
    total = running + offered
    share = running / total if total else 0.0
    figures = {"running": running, "offered": offered, "share": round(share, 4),
               "threshold": gate.min_share}  # fmt: skip
    if not gate.enabled:
        return Verdict("uptake", PASS, "off", figures)
    said = f"{running} of {total} checks run the new version ({_percent(share)})"
    if elapsed < gate.window_seconds:
        return Verdict("uptake", WAIT, f"{said}; decides after {gate.window_seconds} s", figures)
    if total < gate.min_checks:
        return Verdict("uptake", WAIT, f"{said}; decides from {gate.min_checks} checks", figures)
    if share < gate.min_share:
        return Verdict("uptake", FAIL, f"{said}, below {_percent(gate.min_share)}", figures)
    return Verdict("uptake", PASS, f"{said}, at least {_percent(gate.min_share)}", figures)


def external_verdict(
    gate: ExternalGate, new: tuple[int, int] | None, old: tuple[int, int] | None
) -> Verdict:
    figures: dict[str, Any] = {"new": _rate_json(new), "old": _rate_json(old),
                               "max_drop": gate.max_drop}  # fmt: skip
    if not gate.enabled:
        return Verdict("external", PASS, "off", figures)
    if new is None or old is None or min(new[0], old[0]) < gate.min_sessions:
        missing = "no figures" if new is None or old is None else "too few sessions"
        return Verdict(
            "external", WAIT, f"{missing} yet (at least {gate.min_sessions} sessions of the "
            "new release and of the one it replaces)", figures
        )  # fmt: skip
    new_rate, old_rate = _crash_free(new), _crash_free(old)
    said = (f"crash-free sessions {_percent(new_rate)} against {_percent(old_rate)} "
            "for the release it replaces")  # fmt: skip
    if new_rate < old_rate - gate.max_drop:
        return Verdict("external", FAIL, f"{said}: down by more than {_percent(gate.max_drop)}",
                       figures)  # fmt: skip
    return Verdict("external", PASS, said, figures)


def _crash_free(figures: tuple[int, int]) -> float:
    sessions, crashed = figures
    return 1.0 - crashed / sessions if sessions else 1.0


def _rate_json(figures: tuple[int, int] | None) -> dict[str, Any] | None:
    if figures is None:
        return None
    return {"sessions": figures[0], "crashed_sessions": figures[1],
            "crash_free": round(_crash_free(figures), 4)}  # fmt: skip


async def measure(db: Queryable, plan: PlanRow, now: datetime) -> Figures:
    """Every gate's verdict on `plan` now, and the installs counted since it started."""
    gates = stored_plan(plan.steps, plan.gates, plan.on_failure).gates
    running, offered, downloads = await queries.uptake_counts(
        db, plan.repo_id, version(plan.tag), plan.tag, plan.started_at
    )
    elapsed = (now - plan.started_at).total_seconds()
    replaced = await queries.replaced_release(db, plan.release_id)
    new = await queries.health_of(db, plan.release_id)
    old = None if replaced is None else await queries.health_of(db, replaced[0])
    verdicts = (
        uptake_verdict(gates.uptake, running, offered, elapsed),
        external_verdict(gates.external, new, old),
    )
    return Figures(verdicts, downloads)
