"""The audit log's reads (docs/audit.md "Reading it"):

    GET /api/v2/repos/{owner}/{repo}/audit   the repository's entries: its admins, site admins
    GET /api/v2/admin/audit                  every entry (`repo=OWNER/NAME` narrows): site admins

Newest first, paged like the release list (`page`, `limit`, `X-Total-Count`, `Link`), filtered by
`actor` (a login), `kind` (`release` takes every `release.*`) and `since` (RFC 3339). Whoever may
not read a repository's log is told 404, as for anything private they cannot see: a reader, a
writer, a stranger alike. Answers are never stored (`Cache-Control: no-store`).
"""

from __future__ import annotations

from aiohttp import web
from forge_common.audit import Filters, queries
from forge_common.auth import viewer_of
from forge_common.errors import AuthTokenMissing, NotFound
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import json_response

from ..read.handlers import link_header
from ..read.params import page_of
from .reading import entries_of, filters_of, readable_log, rendered, text_of

_NO_STORE = {"Cache-Control": "no-store"}


async def _page(request: web.Request, base: str, filters: Filters) -> web.Response:
    page = page_of(request.query)
    total, entries = await entries_of(request.app[DB_POOL], filters, page)
    extra = {k: v for k, v in request.query.items() if k in ("actor", "kind", "since", "repo")}
    headers = {**_NO_STORE, "X-Total-Count": str(total)}
    link = link_header(request, base, page, total, extra)
    if link:
        headers["Link"] = link
    return json_response([rendered(e) for e in entries], headers=headers)


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
    repo = text_of(request.query, "repo")
    repo_id = await _repo_id(request, repo) if repo else None
    base = f"{request.app[SETTINGS].app_url}api/v2/admin/audit"
    return await _page(request, base, filters_of(request.query, repo_id))
