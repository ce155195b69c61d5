"""The audit log's reads (docs/audit.md "Reading it"):

    GET /api/v2/repos/{owner}/{repo}/audit   the repository's entries: its admins, site admins
    GET /api/v2/admin/audit                  every entry (`repo=OWNER/NAME` narrows): site admins

Newest first, paged like the release list (`page`, `limit`, `X-Total-Count`, `Link`), filtered by
`actor` (a login), `kind` (`release` takes every `release.*`) and `since` (RFC 3339). Whoever may
not read a repository's log is told 404, as for anything private they cannot see: a reader, a
writer, a stranger alike. Answers are never stored (`Cache-Control: no-store`).
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
from forge_common.errors import AuthTokenMissing, NotFound, RepoNotFound
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import json_response

from ..errors import InvalidField
from ..models import Resolved
from ..read.handlers import link_header
from ..read.params import Page, page_of
from ..read.resolve import resolve

_NO_STORE = {"Cache-Control": "no-store"}


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


def _text(query: Mapping[str, str], name: str) -> str | None:
    value = query.get(name, "").strip()
    return value if value and "\x00" not in value else None


def filters_of(query: Mapping[str, str], repo_id: int | None) -> Filters:
    return Filters(
        repo_id=repo_id,
        actor=_text(query, "actor"),
        kind=_text(query, "kind"),
        since=_since(query.get("since")),
    )


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


async def entries_of(pool: Queryable, filters: Filters, page: Page) -> tuple[int, list[Entry]]:
    """The total the filters match and the page's entries, newest first (the API's and the
    console's page alike)."""
    total = await queries.count(pool, filters)
    entries = []
    if page.reachable:
        entries = await queries.page(pool, filters, limit=page.limit, offset=page.offset)
    return total, entries


async def _page(request: web.Request, base: str, filters: Filters) -> web.Response:
    page = page_of(request.query)
    total, entries = await entries_of(request.app[DB_POOL], filters, page)
    extra = {k: v for k, v in request.query.items() if k in ("actor", "kind", "since", "repo")}
    headers = {**_NO_STORE, "X-Total-Count": str(total)}
    link = link_header(request, base, page, total, extra)
    if link:
        headers["Link"] = link
    return json_response([rendered(e) for e in entries], headers=headers)


async def readable_log(request: web.Request) -> Resolved:
    """The repository of the path, for whoever may read its log (its admins, site admins): the
    one decision of the API and the console's page."""
    resolved = await resolve(request)  # 404 / 401 as for everything of a repository
    if resolved.access < Access.ADMIN:
        raise RepoNotFound()  # not even that there is a log: 404 as for a private repository
    return resolved


async def repo_audit(request: web.Request) -> web.Response:
    ref = (await readable_log(request)).ref
    base = f"{request.app[SETTINGS].app_url}api/v2/repos/{ref.owner}/{ref.name}/audit"
    return await _page(request, base, filters_of(request.query, ref.repo_id))


class AuditNotFound(NotFound):
    code = "NotFound"

    def __init__(self) -> None:
        super().__init__("Not found")


async def _repo_id(request: web.Request, full_name: str) -> int:
    owner, _, name = full_name.partition("/")
    return await queries.repo_id_named(request.app[DB_POOL], owner, name)


async def admin_audit(request: web.Request) -> web.Response:
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if not viewer.is_admin:
        raise AuditNotFound()
    repo = _text(request.query, "repo")
    repo_id = await _repo_id(request, repo) if repo else None
    base = f"{request.app[SETTINGS].app_url}api/v2/admin/audit"
    return await _page(request, base, filters_of(request.query, repo_id))
