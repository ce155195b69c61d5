"""GET /api/v2/repos/{owner}/{repo}/insights: counts of checks and downloads over time, split by
one dimension (docs/insights.md "API").

Only the repository's admins and publishers (write access) see it. Everyone else, anonymous
callers of a private repository and readers of a public one included, gets exactly the 404 of a
repository that does not exist, so nobody learns whether it exists or is counted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from forge_common.access import Access
from forge_common.errors import AuthTokenMissing, RepoNotFound
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..models import RepoRef
from ..read.resolve import resolve
from . import queries
from .params import Window, window

NO_STORE = {"Cache-Control": "no-store", "Vary": "Authorization"}


async def insights_reader(request: web.Request) -> RepoRef:
    """The repository, when the caller may read its insights (write access); else RepoNotFound,
    whatever the reason (also the page's gate, insights/page.py)."""
    try:
        resolved = await resolve(request)
    except AuthTokenMissing:
        raise RepoNotFound() from None
    if resolved.access < Access.WRITE:
        raise RepoNotFound()
    return resolved.ref


def _label(at: datetime, interval: str) -> str:
    return at.date().isoformat() if interval == "day" else at.strftime("%Y-%m-%dT%H:%M:%SZ")


def series(dense: queries.Dense) -> dict[str, Any]:
    """The series of one kind, the busiest value first."""
    totals = {value: sum(counts) for value, counts in dense.items()}
    ranked = sorted(dense, key=lambda value: (-totals[value], value))
    rows = [{"value": v, "total": totals[v], "counts": dense[v]} for v in ranked]
    return {"total": sum(totals.values()), "series": rows}


async def read_insights(app: web.Application, repo_id: int, span: Window) -> dict[str, Any]:
    """The API's body for `span` (the page renders the same)."""
    pool, buckets = app[DB_POOL], span.buckets()
    body: dict[str, Any] = {
        "interval": span.interval,
        "by": span.by,
        "from": _label(span.start, span.interval),
        "to": _label(span.end, span.interval),
        "buckets": [_label(at, span.interval) for at in buckets],
    }
    for kind, name in (("check", "checks"), ("download", "downloads")):
        if span.interval == "day":
            dense = await queries.daily_series(
                pool, repo_id, kind, span.dim, span.start.date(), span.end.date()
            )
        else:
            dense = await queries.hourly_series(pool, repo_id, kind, span.dim, span.start, span.end)
        body[name] = series(dense)
    return body


async def insights(request: web.Request) -> web.Response:
    ref = await insights_reader(request)
    span = window(request.query, datetime.now(UTC))
    return json_response(await read_insights(request.app, ref.repo_id, span), headers=NO_STORE)
