"""GET /{user}: a user's profile page (docs/pages.md), at the address every User object's
`html_url` names; `/{name}` is an organization's page when the name is an organization's.

It shows the user's repositories the viewer may read (the one access resolver decides, as for
every API read: public ones to everyone, private ones only to those with access) and the
organizations where the user's membership is public and which the viewer may see (a public
organization to everyone, a limited one to the signed-in, a private one to its members and site
administrators). A name that is neither a user nor an organization the viewer may see answers
the organization page's 404, so the two cannot be told apart.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.access import readable, visible_public_memberships
from forge_common.auth import viewer_of
from forge_common.keys import DB_POOL
from forge_common.pages import page_response

from .. import render
from ..http import base_url

_USER = """
SELECT id, name, full_name, created_at FROM core.accounts
 WHERE kind = 'user' AND lower(name) = lower($1)
"""

_REPOS = """
SELECT id, name, description, private FROM core.repositories
 WHERE owner_id = $1 ORDER BY lower(name) LIMIT 200
"""


async def user_page(request: web.Request, name: str) -> web.StreamResponse | None:
    """The profile of user `name`; None when there is no such user."""
    pool = request.app[DB_POOL]
    user = await pool.fetchrow(_USER, name)
    if user is None:
        return None
    viewer = viewer_of(request)
    base = base_url(request)
    repos = await readable(pool, viewer, await pool.fetch(_REPOS, user["id"]))
    orgs = await visible_public_memberships(pool, user["id"], viewer)
    profile = render.user(base, user["id"], user["name"], user["full_name"])
    context = {
        "user": profile,
        "repos": [
            {**dict(row), "url": f"{profile['html_url']}/{render._segment(row['name'])}"}
            for row in repos
        ],
        "orgs": [{**dict(row), "url": f"{base}{row['name']}"} for row in orgs],
        "og_url": profile["html_url"],
        "og_description": f"{user['full_name'] or user['name']} on Forge",
        "og_image": profile["avatar_url"],
    }
    # anonymous visitors all see the same (public repositories and organizations only)
    return page_response(request, "orgs/user.html", context, public=viewer is None)
