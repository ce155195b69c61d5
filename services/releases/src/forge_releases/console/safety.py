"""Release safety in the console (docs/release-safety.md), for a release's publishers:

- `GET .../releases/edit/{tag}/withdraw` asks for confirmation, saying what happens to installs:
  which of the repository's updaters roll installs on it back to the newest release that is not
  withdrawn, and which only stop offering it; `POST` withdraws it with the reason given (or, with
  `action=restore`, offers it again).
- `POST .../releases/edit/{tag}/safety` sets `required` (a step every install below passes
  through) and `critical` (installs below must update: the minimum version).

Every change goes through the API's PATCH (publish/writes.update_release), CSRF-checked like every
console form, and is audited with the source `console`.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.audit import origin_of
from forge_common.csrf import checked_form, text_field
from forge_common.errors import ApiError
from forge_common.pages import page, see_other

from ..publish import writes
from ..read.update_check import repo_releases
from .forms import console_page
from .releases import edit_path, release_of, repo_context
from .updaters import rollback_of

TEMPLATE = "releases/console/withdraw.html"


@page
async def confirm_withdraw(request: web.Request) -> web.StreamResponse:
    resolved, _, release = await release_of(request)
    if release.draft or release.withdrawn:
        return see_other(edit_path(resolved, release.tag))
    return await _confirmation(request, release_tag=release.tag)


async def _confirmation(
    request: web.Request, *, release_tag: str, reason: str = "", error: str = "", status: int = 200
) -> web.Response:
    resolved, _, release = await release_of(request)
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    pool = candidates.everything if release.prerelease else candidates.stable
    remaining = [r for r in pool if r.id != release.id]
    rolls_back, stops = rollback_of(release)
    context = {
        "repo": repo_context(request, resolved),
        "tag": release_tag,
        "title": release.title or release.tag,
        "rolls_back": rolls_back,
        "stops": stops,
        "instead": remaining[0].tag if remaining else None,
        "edit_url": edit_path(resolved, release.tag),
        "reason": reason,
        "error": error,
    }
    return console_page(request, TEMPLATE, context, status=status)


@page
async def withdraw(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    restore = text_field(form, "action") == "restore"
    reason = text_field(form, "reason")
    body: dict[str, object] = {"withdrawn": False}
    if not restore:
        body = {"withdrawn": True, "withdrawn_reason": reason}
    try:
        await writes.update_release(
            request.app,
            resolved.ref,
            viewer.id,
            release.id,
            body,
            origin=origin_of(request, "console"),
        )
    except ApiError as error:
        return await _confirmation(
            request,
            release_tag=release.tag,
            reason=reason,
            error=error.message,
            status=error.status,
        )
    done = "restored" if restore else "withdrawn"
    return see_other(f"{edit_path(resolved, release.tag)}?done={done}")


@page
async def set_safety(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    body = {name: text_field(form, name) == "on" for name in ("required", "critical")}
    await writes.update_release(
        request.app,
        resolved.ref,
        viewer.id,
        release.id,
        body,
        origin=origin_of(request, "console"),
    )
    return see_other(f"{edit_path(resolved, release.tag)}?done=safety")
