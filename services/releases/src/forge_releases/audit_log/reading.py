"""Reading the audit log: the filters of a query, one page of entries, and who may read a
repository's log. One decision for the API (handlers.py) and the console's page (console/audit.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aiohttp import web
from forge_common.access import Access
from forge_common.audit import Entry, Filters, queries
from forge_common.auth import viewer_of
from forge_common.db import Queryable
from forge_common.errors import AuthTokenMissing, RepoNotFound

from ..errors import InvalidField
from ..models import Resolved
from ..read.params import Page
from ..read.resolve import resolve


def _since(raw: str | None) -> datetime | None:
    if raw is None or raw == "":
        return None
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidField("since", "must be an RFC 3339 time, e.g. 2026-11-29T00:00:00Z") from None
    if moment.tzinfo is None:
        raise InvalidField("since", "must name its time zone (Z or an offset)")
    return moment


def text_of(query: Mapping[str, str], name: str) -> str | None:
    value = query.get(name, "").strip()
    return value if value and "\x00" not in value else None


def filters_of(query: Mapping[str, str], repo_id: int | None) -> Filters:
    return Filters(
        repo_id=repo_id,
        actor=text_of(query, "actor"),
        kind=text_of(query, "kind"),
        since=_since(query.get("since")),
    )


async def entries_of(pool: Queryable, filters: Filters, page: Page) -> tuple[int, list[Entry]]:
    """The total the filters match and the page's entries, newest first (the API's and the
    console's page alike)."""
    total = await queries.count(pool, filters)
    entries = []
    if page.reachable:
        entries = await queries.page(pool, filters, limit=page.limit, offset=page.offset)
    return total, entries


async def readable_log(request: web.Request) -> Resolved:
    """The repository of the path, for whoever may read its log (its admins, site admins): the
    one decision of the API and the console's page."""
    resolved = await resolve(request)  # 404 / 401 as for everything of a repository
    if viewer_of(request) is None:
        # sign in first, as every admin route answers: anonymous callers see that the
        # repository exists anyway (a private one's answer is this 401 already)
        raise AuthTokenMissing()
    if resolved.access < Access.ADMIN:
        raise RepoNotFound()  # not even that there is a log: 404 as for a private repository
    return resolved


def rendered(entry: Entry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "created_at": entry.created_at,
        "actor": entry.actor,
        "kind": entry.kind,
        "target": entry.target,
        "changes": entry.changes,
        "request_id": entry.request_id,
        "source": entry.source,
        "repo_id": entry.repo_id,
    }
