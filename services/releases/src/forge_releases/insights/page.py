"""GET /{owner}/{repo}/insights: the insights API's numbers as charts with tables, for the same
callers (admins and publishers; everyone else gets the page of a repository that does not
exist). The viewer is found as every page finds it (the Authorization header, read by the
middleware). `?from=&to=` (days) choose the window; 30 days by default."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import page, page_response
from forge_common.versions import parse_version

from ..models import Release
from ..read.update_check import repo_releases
from ..urls import repo_url
from .charts import Chart, series_chart, share_chart
from .handlers import insights_reader, read_insights
from .params import window
from .rollout_charts import rollout_charts

TOP = 8  # series drawn; the rest are summed into one
RELEASES_FOLLOWED = 3  # newest releases whose uptake and offers are drawn


def _label(value: str, kind: str) -> str:
    return value or {"running": "not said", "offered": "up to date", "file": "?"}.get(kind, "?")


def _top(series: Sequence[dict[str, Any]], kind: str, rest: str) -> list[tuple[str, list[int]]]:
    """The busiest TOP series, and the others summed as `rest`."""
    shown = [(_label(s["value"], kind), s["counts"]) for s in series[:TOP]]
    others = series[TOP:]
    if others:
        summed = [sum(column) for column in zip(*(s["counts"] for s in others), strict=True)]
        shown.append((rest, summed))
    return shown


def _by_value(body: dict[str, Any], kind: str = "checks") -> dict[str, list[int]]:
    return {s["value"]: s["counts"] for s in body[kind]["series"]}


def _uptake(
    buckets: Sequence[str], running: dict[str, list[int]], releases: Sequence[Release]
) -> list[tuple[str, list[float]]]:
    """Per release, the share of each day's checks made by installs already running it (or
    newer), from the day it was published."""
    # no checks in the window: a day of none for every bucket, so every share is 0
    daily = [sum(col) for col in zip(*running.values(), strict=True)] or [0] * len(buckets)
    lines = []
    for release in releases:
        version = parse_version(release.tag)
        if version is None:
            continue
        published = release.created_at.astimezone(UTC).date().isoformat()
        newer = [
            counts
            for value, counts in running.items()
            if (v := parse_version(value)) is not None and v >= version
        ]
        shares = []
        for i, day in enumerate(buckets):
            on = sum(counts[i] for counts in newer)
            shares.append(100 * on / daily[i] if day >= published and daily[i] else 0.0)
        lines.append((release.tag, shares))
    return lines


def _offers(
    offered: dict[str, list[int]], releases: Sequence[Release]
) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """Checks offered each followed release per day; notes on staged rollouts."""
    lines, notes = [], []
    for release in releases:
        version = parse_version(release.tag)
        if version is None:
            continue
        counts = offered.get(str(version))
        if counts is not None:
            lines.append((release.tag, counts))
        if release.rollout is not None:
            notes.append(f"{release.tag} is rolled out to {release.rollout} % of installs.")
    return lines, notes


async def _charts(
    app: web.Application, repo_id: int, query: Any
) -> tuple[dict[str, Any], list[Chart]]:
    span = window({**query, "interval": "day"}, datetime.now(UTC))
    read = {
        by: await read_insights(
            app, repo_id, window({**query, "interval": "day", "by": by}, datetime.now(UTC))
        )
        for by in ("version", "offered", "platform", "arch", "file")
    }
    candidates = await repo_releases(app, repo_id)
    followed = list(candidates.everything[:RELEASES_FOLLOWED])
    charts = _version_charts(read, followed) + _share_charts(read)
    charts += await rollout_charts(app[DB_POOL], repo_id, followed)
    summary = {
        "from": span.start.date().isoformat(),
        "to": span.end.date().isoformat(),
        "checks": read["version"]["checks"]["total"],
        "downloads": read["file"]["downloads"]["total"],
    }
    return summary, charts


def _version_charts(read: dict[str, Any], followed: list[Release]) -> list[Chart]:
    """Active versions, update uptake and rollout reach, per day."""
    buckets = read["version"]["buckets"]
    offers, notes = _offers(_by_value(read["offered"]), followed)
    reach = series_chart(
        "offers",
        "Rollout reach",
        "Update checks per day that were offered each new release.",
        buckets,
        offers,
        kind="line",
    )
    reach.notes.extend(notes)
    return [
        series_chart(
            "versions",
            "Active versions",
            "Update checks per day by the version the app runs.",
            buckets,
            _top(read["version"]["checks"]["series"], "running", "other versions"),
        ),
        series_chart(
            "uptake",
            "Update uptake",
            "Share of each day's checks from installs running each new release or a newer "
            "one, since its publication.",
            buckets,
            _uptake(buckets, _by_value(read["version"]), followed),
            kind="line",
            unit="%",
        ),
        reach,
    ]


def _share_charts(read: dict[str, Any]) -> list[Chart]:
    """Platforms and architectures over the period, and downloads per day by file."""
    return [
        share_chart(
            "platforms",
            "Platforms",
            "Update checks in the period by platform.",
            {
                _label(s["value"], "platform"): s["total"]
                for s in read["platform"]["checks"]["series"]
            },
        ),
        share_chart(
            "archs",
            "Architectures",
            "Update checks in the period by architecture.",
            {_label(s["value"], "arch"): s["total"] for s in read["arch"]["checks"]["series"]},
        ),
        series_chart(
            "downloads",
            "Downloads per day",
            "Completed downloads per day of each file.",
            read["version"]["buckets"],
            _top(read["file"]["downloads"]["series"], "file", "other files"),
            kind="stacked_bar",
        ),
    ]


@page
async def insights_page(request: web.Request) -> web.StreamResponse:
    ref = await insights_reader(request)
    summary, charts = await _charts(request.app, ref.repo_id, dict(request.query))
    url = repo_url(request.app[SETTINGS].app_url, ref.owner, ref.name)
    repo = {
        "owner": ref.owner,
        "name": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "url": url,
    }
    context = {"repo": repo, "summary": summary, "charts": charts}
    return page_response(request, "releases/insights.html", context)
