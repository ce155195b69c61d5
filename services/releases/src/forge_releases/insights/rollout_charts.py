"""The insights page's rollout charts (docs/rollouts.md "Insights"): for each followed release
with a rollout plan, its reach per step over time (from the plan's history) and its gate figures
against their thresholds, measured now as the evaluator measures them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from forge_common.db import Queryable

from ..models import Release
from ..rollouts import queries
from ..rollouts.gates import measure
from .charts import Chart, series_chart, threshold_chart


def _reach(key: int, tag: str, history: Sequence[dict[str, Any]]) -> Chart:
    times = [event["at"].astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") for event in history]
    percents = [float(event["percent"]) for event in history]
    chart = series_chart(
        f"rollout-reach-{key}",
        f"Rollout of {tag}: reach per step",
        "The share of installs offered the release after each decision of its plan.",
        times,
        [("offered to", percents)],
        kind="line",
        unit="%",
        bucket_name="Decision (UTC)",
    )
    chart.notes.extend(
        f"{time}: {event['summary']}" for time, event in zip(times, history, strict=True)
    )
    return chart


def _gate_bars(figures: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(name, measured %, threshold %) of each gate that has figures to show."""
    bars = []
    uptake = figures["gates"]["uptake"]
    if uptake["running"] + uptake["offered"]:
        bars.append(("Update uptake", 100 * uptake["share"], 100 * uptake["threshold"]))
    external = figures["gates"]["external"]
    if external["new"] is not None and external["old"] is not None:
        old = 100 * external["old"]["crash_free"]
        bars.append(("Crash-free sessions", 100 * external["new"]["crash_free"],
                     old - 100 * external["max_drop"]))  # fmt: skip
    return bars


def _gates(key: int, tag: str, figures: dict[str, Any]) -> Chart:
    chart = threshold_chart(
        f"rollout-gates-{key}",
        f"Rollout of {tag}: gates",
        "Each gate's figure now against the threshold below which the plan halts.",
        _gate_bars(figures),
    )
    chart.notes.extend(
        f"{name}: {gate['status']}, {gate['detail']}" for name, gate in figures["gates"].items()
    )
    return chart


async def rollout_charts(db: Queryable, repo_id: int, followed: Sequence[Release]) -> list[Chart]:
    charts: list[Chart] = []
    for release in followed:
        plan = await queries.plan_of(db, repo_id, release.id)
        if plan is None:
            continue
        history = await queries.events_of(db, release.id)
        figures = (await measure(db, plan, datetime.now(UTC))).as_json()
        charts += [
            _reach(release.id, release.tag, history),
            _gates(release.id, release.tag, figures),
        ]
    return charts
