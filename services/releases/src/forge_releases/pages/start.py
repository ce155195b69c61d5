"""GET / (the start page, docs/pages.md): the instance's public organizations and public
repositories with their latest release, a sign-in link, and for a signed-in visitor the
repositories they belong to.

Served by the releases service, the owner of the latest releases it shows. A repository's latest
release is the one the pages call latest (pages/offers.page_latest: the highest version among the
update check's cached candidates, what an updater is offered, never a tag no updater can
compare); the visitor's own repositories are those the access resolver gives them read access
to, never more. The public part is the same for every visitor.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.access import repositories_of_viewer
from forge_common.auth import viewer_of
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import page, page_response

from ..read.update_check import repo_releases
from ..urls import repo_url, segment
from .offers import page_latest

LIMIT = 50  # of each list: the start page is a door, not a directory

_PUBLIC_ORGS = """
SELECT name, full_name, description FROM core.accounts
 WHERE kind = 'org' AND visibility = 'public'
 ORDER BY lower(name) LIMIT $1
"""

# public repositories of users and public organizations: what every visitor may read
_PUBLIC_REPOS = """
SELECT r.id, o.name AS owner, r.name, r.description
  FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
 WHERE NOT r.private AND (o.kind = 'user' OR o.visibility = 'public')
 ORDER BY r.updated_at DESC, r.id DESC LIMIT $1
"""


async def _with_latest(request: web.Request, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    app_url = request.app[SETTINGS].app_url
    for row in rows:
        candidates = await repo_releases(request.app, row["id"])
        latest = page_latest(candidates.stable)
        row["url"] = repo_url(app_url, row["owner"], row["name"])
        row["latest"] = latest.tag if latest else None
        row["latest_url"] = (
            f"{row['url']}/releases/tag/{segment(latest.tag)}" if latest is not None else None
        )
    return rows


@page
async def start_page(request: web.Request) -> web.StreamResponse:
    pool = request.app[DB_POOL]
    viewer = viewer_of(request)
    orgs = [dict(row) for row in await pool.fetch(_PUBLIC_ORGS, LIMIT)]
    public = [dict(row) for row in await pool.fetch(_PUBLIC_REPOS, LIMIT)]
    repos = await _with_latest(request, public)
    mine = None
    if viewer is not None:
        mine = await _with_latest(request, await repositories_of_viewer(pool, viewer, LIMIT))
    app_url = request.app[SETTINGS].app_url
    context = {
        "orgs": orgs,
        "repos": repos,
        "mine": mine,
        "og_url": app_url,
        "og_description": "Releases and updates served by Forge",
    }
    return page_response(request, "releases/start.html", context, public=viewer is None)
