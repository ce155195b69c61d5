"""What a publisher sends as a rollout plan, checked, with every gate's defaults filled in.

`{"steps": [{"percent", "hold_seconds", "min_installs"}], "gates": {"uptake": {...},
"external": {...}}, "on_failure": "halt" | "withdraw"}`: at most 20 steps of rising percentages
(the last one need not be 100: the plan is `done` there), each held at least `hold_seconds`
(1 second to 30 days) and, when `min_installs` is set, until that many checks ran the new
version (insights' counts). Gates are documented in docs/rollouts.md "Gates".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

from forge_common.body import optional_bool, optional_int, optional_str
from forge_common.errors import Unprocessable

MAX_STEPS = 20
MAX_HOLD = 30 * 24 * 3600
MAX_COUNT = 2**62
ON_FAILURE = ("halt", "withdraw")
STATES = ("running", "paused", "halted", "done")


@dataclass(frozen=True, slots=True)
class Step:
    percent: int
    hold_seconds: int
    min_installs: int = 0


@dataclass(frozen=True, slots=True)
class UptakeGate:
    """Of the checks offered the new version or running it, the share running it."""

    enabled: bool = True
    min_share: float = 0.5  # fails below this share
    window_seconds: int = 3600  # decides only once the plan has run this long
    min_checks: int = 20  # and counted this many checks (fewer: no decision)


@dataclass(frozen=True, slots=True)
class ExternalGate:
    """Crash-free sessions of the new release against the release it replaces."""

    enabled: bool = True
    max_drop: float = 0.01  # fails when crash-free falls by more than this (0.01: 1 point)
    min_sessions: int = 100  # figures of fewer sessions (either release): no decision


@dataclass(frozen=True, slots=True)
class Gates:
    uptake: UptakeGate = field(default_factory=UptakeGate)
    external: ExternalGate = field(default_factory=ExternalGate)


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[Step, ...]
    gates: Gates
    on_failure: str = "halt"

    def steps_json(self) -> list[dict[str, int]]:
        return [asdict(step) for step in self.steps]

    def gates_json(self) -> dict[str, Any]:
        return asdict(self.gates)


def _object(value: Any, name: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise Unprocessable(f"{name} must be an object", field=name)
    return value


def _share(data: Mapping[str, Any], name: str, default: float, where: str) -> float:
    value = data.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise Unprocessable(f"{where}.{name} must be a number from 0 to 1", field=name)
    return float(value)


def _count(data: Mapping[str, Any], name: str, default: int, high: int = MAX_COUNT) -> int:
    value = optional_int(data, name, low=0, high=high)
    return default if value is None else value


def _step(raw: Any, index: int) -> Step:
    data = _object(raw, f"steps[{index}]")
    percent = optional_int(data, "percent", low=1, high=100)
    hold = optional_int(data, "hold_seconds", low=1, high=MAX_HOLD)
    if percent is None or hold is None:
        raise Unprocessable(
            f"steps[{index}] needs percent (1-100) and hold_seconds (1-{MAX_HOLD})", field="steps"
        )
    return Step(percent, hold, _count(data, "min_installs", 0))


def _steps(value: Any) -> tuple[Step, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_STEPS:
        raise Unprocessable(f"steps must be a list of 1 to {MAX_STEPS} steps", field="steps")
    steps = tuple(_step(raw, i) for i, raw in enumerate(value))
    for before, after in pairwise(steps):
        if after.percent <= before.percent:
            raise Unprocessable("steps must raise the percentage at each step", field="steps")
    return steps


def _gates(value: Any) -> Gates:
    data = _object(value, "gates")
    unknown = set(data) - {"uptake", "external"}
    if unknown:
        raise Unprocessable(f"gates: unknown gate {sorted(unknown)[0]}", field="gates")
    up = _object(data.get("uptake"), "gates.uptake")
    ext = _object(data.get("external"), "gates.external")
    default_up, default_ext = UptakeGate(), ExternalGate()
    uptake = UptakeGate(
        enabled=_flag(up, default_up.enabled),
        min_share=_share(up, "min_share", default_up.min_share, "gates.uptake"),
        window_seconds=_count(up, "window_seconds", default_up.window_seconds, MAX_HOLD),
        min_checks=_count(up, "min_checks", default_up.min_checks),
    )
    external = ExternalGate(
        enabled=_flag(ext, default_ext.enabled),
        max_drop=_share(ext, "max_drop", default_ext.max_drop, "gates.external"),
        min_sessions=_count(ext, "min_sessions", default_ext.min_sessions),
    )
    return Gates(uptake, external)


def _flag(data: Mapping[str, Any], default: bool) -> bool:
    value = optional_bool(data, "enabled")
    return default if value is None else value


def plan_of(data: Mapping[str, Any]) -> Plan:
    """The plan a PUT body describes (422 naming what is wrong)."""
    on_failure = optional_str(data, "on_failure") or "halt"
    if on_failure not in ON_FAILURE:
        raise Unprocessable("on_failure must be halt or withdraw", field="on_failure")
    return Plan(_steps(data.get("steps")), _gates(data.get("gates")), on_failure)


def stored_plan(steps: list[dict[str, Any]], gates: Mapping[str, Any], on_failure: str) -> Plan:
    """A plan as the table keeps it (written by `plan_of`, so already checked)."""
    return Plan(
        tuple(Step(**step) for step in steps),
        Gates(UptakeGate(**gates["uptake"]), ExternalGate(**gates["external"])),
        on_failure,
    )
