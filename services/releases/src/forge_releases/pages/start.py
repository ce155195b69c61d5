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
from forge_common.access import Access, repository_access
from forge_common.auth import Viewer, viewer_of
from forge_common.db import Queryable
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

# the repositories the viewer belongs to (owner, organization member, collaborator, team member);
# what they may read of them is the access resolver's decision
_MINE = """
SELECT r.id, o.name AS owner, r.name, r.description
  FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
 WHERE r.owner_id = $1
    OR r.owner_id IN (SELECT org_id FROM core.org_members WHERE user_id = $1)
    OR r.id IN (SELECT repo_id FROM core.collaborators WHERE user_id = $1)
    OR r.id IN (SELECT tr.repo_id FROM core.team_repos tr
                  JOIN core.team_members tm ON tm.team_id = tr.team_id WHERE tm.user_id = $1)
 ORDER BY r.updated_at DESC, r.id DESC LIMIT $2
"""


async def _mine(db: Queryable, viewer: Viewer) -> list[dict[str, Any]]:
    rows = [dict(row) for row in await db.fetch(_MINE, viewer.id, LIMIT)]
    levels = await repository_access(db, viewer, [row["id"] for row in rows])
    return [row for row in rows if levels.get(row["id"], Access.NONE) >= Access.READ]


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
    mine = await _with_latest(request, await _mine(pool, viewer)) if viewer else None
    app_url = request.app[SETTINGS].app_url
    context = {
        "orgs": orgs,
        "repos": repos,
        "mine": mine,
        "og_url": app_url,
        "og_description": "Releases and updates served by Forge",
    }
    return page_response(request, "releases/start.html", context, public=viewer is None)
