"""`/{owner}/{repo}/settings`: a repository's visibility, public landing page and public
releases (docs/access.md), for its admins, written by the same function as Gitea's
`PATCH /api/v1/repos/{owner}/{repo}` (compat/repo_admin.py)."""

from __future__ import annotations

from aiohttp import web
from forge_common.access import Access
from forge_common.csrf import checked_form
from forge_common.pages import page, see_other

from ..compat.repo_admin import edit_repository, repository_rows
from .access import console_repo
from .forms import checkbox, console_page
from .releases import repo_context


@page
async def repo_settings(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request, Access.ADMIN)
    _, repo = await repository_rows(request, resolved)
    context = {
        "repo": repo_context(request, resolved),
        "private": repo.private,
        "public_landing": repo.public_landing,
        "public_releases": repo.public_releases,
        "saved": bool(request.query.get("done")),
    }
    return console_page(request, "releases/console/settings.html", context)


@page
async def save_repo_settings(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request, Access.ADMIN)
    form = await checked_form(request)
    changes = {
        "private": form.get("visibility") == "private",
        "public_landing": checkbox(form, "public_landing"),
        "public_releases": checkbox(form, "public_releases"),
    }
    await edit_repository(request, resolved, viewer, changes)
    ref = resolved.ref
    return see_other(f"/{ref.owner}/{ref.name}/settings?done=saved")
