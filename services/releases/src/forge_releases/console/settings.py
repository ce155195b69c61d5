"""`/{owner}/{repo}/settings`: a repository's visibility, public landing page and public
releases (docs/access.md), for its admins."""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access
from forge_common.csrf import checked_form
from forge_common.keys import DB_POOL
from forge_common.pages import page, see_other

from ..keys import RELEASE_CACHE
from . import queries
from .access import console_repo
from .forms import checkbox, console_page
from .releases import repo_context


@page
async def repo_settings(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    private, landing, releases = await queries.repo_flags(
        request.app[DB_POOL], resolved.ref.repo_id
    )
    context = {
        "repo": repo_context(request, resolved),
        "private": private,
        "public_landing": landing,
        "public_releases": releases,
        "saved": bool(request.query.get("done")),
    }
    return console_page(request, "releases/console/settings.html", context)


@page
async def save_repo_settings(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    form = await checked_form(request)
    ref = resolved.ref
    await queries.set_repo_flags(
        request.app[DB_POOL],
        ref.repo_id,
        private=form.get("visibility") == "private",
        public_landing=checkbox(form, "public_landing"),
        public_releases=checkbox(form, "public_releases"),
    )
    # this replica's cache at once (the next page reads its own write); the others hear the
    # triggers' NOTIFY
    cache = request.app[RELEASE_CACHE]
    cache.invalidate_names()
    cache.invalidate_repo(ref.repo_id)
    return see_other(f"/{ref.owner}/{ref.name}/settings?done=saved")
