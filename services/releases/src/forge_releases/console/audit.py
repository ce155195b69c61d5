"""`/{owner}/{repo}/audit`: the repository's audit log in the console (docs/audit.md "Reading
it"), newest first, paged and filtered by kind and actor as the API is: the API's own access
decision and queries (audit_log/reading.py, forge_common.audit.queries), rendered on the server.

Nothing secret can show: the log never stores a credential (forge_common.audit.SECRET_FIELDS).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from forge_common.audit import Entry
from forge_common.keys import DB_POOL
from forge_common.pages import page

from ..audit_log.reading import entries_of, filters_of, readable_log, rendered
from ..read.params import page_of
from .forms import console_page
from .releases import repo_context

TEMPLATE = "releases/console/audit.html"
# What the kind filter suggests: each kind family a repository's log holds (a family takes every
# kind below it), then its kinds (docs/audit.md "Kinds").
KIND_SUGGESTIONS = (
    "release",
    "rollout_plan",
    "update_key",
    "signing_key",
    "membership",
    "repository",
    "release.published",
    "release.rollout",
    "release.withdrawn",
    "release.deleted",
    "release.asset.uploaded",
    "rollout_plan.halted",
    "rollout_plan.withdrawn",
)
# Long values (release notes keep 500 characters in the log) are cut on the page, whole in the API.
SHOWN_CHARACTERS = 200


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS] + "…"


def _row(entry: Entry) -> dict[str, Any]:
    """The API's fields of an entry, each change as (field, before, after) cut for the page."""
    changes = [
        (field, _shown(change.get("before")), _shown(change.get("after")))
        for field, change in entry.changes.items()
    ]
    return {**rendered(entry), "changes": changes}


@page
async def audit_page(request: web.Request) -> web.StreamResponse:
    resolved = await readable_log(request)  # 404 (or 401) exactly as the API answers
    filters = filters_of(request.query, resolved.ref.repo_id)
    shown = page_of(request.query)
    total, entries = await entries_of(request.app[DB_POOL], filters, shown)
    kept = {k: v for k, v in (("kind", filters.kind), ("actor", filters.actor)) if v}
    last = max(1, -(-total // shown.limit))

    def link(number: int) -> str:
        return "?" + urlencode({**kept, "page": number, "limit": shown.limit})

    context = {
        "repo": repo_context(request, resolved),
        "entries": [_row(entry) for entry in entries],
        "total": total,
        "kind": filters.kind or "",
        "actor": filters.actor or "",
        "suggestions": KIND_SUGGESTIONS,
        "page": shown.page,
        "last": last,
        "newer": link(min(shown.page - 1, last)) if shown.page > 1 else "",
        "older": link(shown.page + 1) if shown.page < last else "",
    }
    return console_page(request, TEMPLATE, context)
