"""Rollout and pull-back of a published release, for its publishers.

`POST .../releases/edit/{tag}/rollout` with `rollout` (the new percentage, at least the current
one: installs already offered it keep it) raises the staged rollout through the API's PATCH
(publish/writes.update_release). `GET .../releases/edit/{tag}/unpublish` asks for confirmation,
naming the updaters that stop seeing the release; `POST` turns it back into a draft the same way.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.audit import origin_of
from forge_common.csrf import checked_form, text_field
from forge_common.errors import ApiError
from forge_common.pages import page, see_other

from ..errors import InvalidField
from ..publish import writes
from ..read.update_check import repo_releases
from .forms import console_page
from .releases import edit_path, form_page, release_of, release_path, repo_context, values_of
from .updaters import rollout_of, updaters_offered


def _percentage(value: str, current: int) -> int:
    try:
        number = int(value.strip().rstrip("%"))
    except ValueError:
        raise InvalidField("rollout", "must be a whole number from 1 to 100") from None
    if not 1 <= number <= 100:
        raise InvalidField("rollout", "must be a whole number from 1 to 100")
    if number < current:
        raise InvalidField(
            "rollout", f"can only be raised: {current}% of installs may already have it"
        )
    return number


@page
async def set_rollout(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    back = text_field(form, "back")
    try:
        rollout = _percentage(text_field(form, "rollout"), rollout_of(release))
        await writes.update_release(
            request.app,
            resolved.ref,
            viewer.id,
            release.id,
            {"rollout": rollout},
            origin=origin_of(request, "console"),
        )
    except ApiError as error:
        errors = {"rollout": error.message}
        values = values_of(release)
        return form_page(
            request, resolved, values, release=release, errors=errors, status=error.status
        )
    if back == "release":
        return see_other(release_path(resolved, release.tag))
    return see_other(edit_path(resolved, release.tag))


@page
async def confirm_unpublish(request: web.Request) -> web.StreamResponse:
    resolved, _, release = await release_of(request)
    if release.draft:
        return see_other(edit_path(resolved, release.tag))
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    pool = candidates.everything if release.prerelease else candidates.stable
    remaining = [r for r in pool if r.id != release.id]
    instead = remaining[0].tag if remaining else None
    context = {
        "repo": repo_context(request, resolved),
        "tag": release.tag,
        "title": release.title or release.tag,
        "updaters": updaters_offered(release),
        "instead": instead,
        "edit_url": edit_path(resolved, release.tag),
    }
    return console_page(request, "releases/console/unpublish.html", context)


@page
async def unpublish(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    await checked_form(request)
    await writes.update_release(
        request.app,
        resolved.ref,
        viewer.id,
        release.id,
        {"draft": True},
        origin=origin_of(request, "console"),
    )
    return see_other(edit_path(resolved, release.tag))
