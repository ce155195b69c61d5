"""The release form: `/{owner}/{repo}/releases/new` and `/{owner}/{repo}/releases/edit/{tag}`.

Fields are the API's (`tag_name`, `target_commitish`, `name`, `body`, `prerelease`) and go
through the API's validation (publish/input.py) and writes (publish/writes.py). The button sent
says what to do: `preview` renders the notes with the pages' markdown renderer and saves nothing,
`draft` saves a draft, `publish` publishes, `save` keeps the release's draft state.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from aiohttp import web
from forge_common.audit import origin_of
from forge_common.auth import Viewer
from forge_common.csrf import Form, checked_form, text_field
from forge_common.errors import ApiError
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import page, see_other
from forge_common.versions import parse_version, tag_warning

from ..keys import DOWNLOAD_COUNTER
from ..models import Release, Resolved
from ..publish import writes
from ..publish.input import new_release
from ..read import render
from ..read.handlers import find_release
from ..read.update_check import repo_releases
from ..rollouts.view import plan_context
from ..safety.decide import minimum_version
from ..urls import repo_url
from .access import console_repo
from .forms import checkbox, console_page, field_errors
from .updaters import rollout_of

TEMPLATE = "releases/console/release_form.html"


def repo_context(request: web.Request, resolved: Resolved) -> dict[str, Any]:
    ref = resolved.ref
    url = repo_url(request.app[SETTINGS].app_url, ref.owner, ref.name)
    return {
        "owner": ref.owner,
        "name": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "url": url,
        "path": f"/{ref.owner}/{ref.name}",
        "owner_url": f"{request.app[SETTINGS].app_url}{ref.owner}",
    }


def edit_path(resolved: Resolved, tag: str) -> str:
    return f"/{resolved.ref.owner}/{resolved.ref.name}/releases/edit/{quote(tag, safe='')}"


def release_path(resolved: Resolved, tag: str) -> str:
    return f"/{resolved.ref.owner}/{resolved.ref.name}/releases/tag/{quote(tag, safe='')}"


def _values(form: Form) -> dict[str, Any]:
    return {
        "tag_name": text_field(form, "tag_name").strip(),
        "target_commitish": text_field(form, "target_commitish").strip(),
        "name": text_field(form, "name"),
        "body": text_field(form, "body").replace("\r\n", "\n"),
        "prerelease": checkbox(form, "prerelease"),
        "rollout": text_field(form, "rollout").strip().rstrip("%"),
    }


def _api_body(values: dict[str, Any]) -> dict[str, Any]:
    """The API's JSON body of the form's values: `rollout` a number when one is given (the
    API's own check then says what is wrong with it)."""
    body = {key: value for key, value in values.items() if key != "rollout"}
    rollout = values.get("rollout", "")
    if rollout:
        try:
            body["rollout"] = int(rollout)
        except ValueError:
            body["rollout"] = rollout  # the API answers "rollout must be an integer"
    return body


def values_of(release: Release) -> dict[str, Any]:
    """The form's fields filled from a stored release."""
    return {
        "tag_name": release.tag,
        "target_commitish": release.target,
        "name": release.title,
        "body": release.note,
        "prerelease": release.prerelease,
        "rollout": str(rollout_of(release)),
    }


def form_page(
    request: web.Request,
    resolved: Resolved,
    values: dict[str, Any],
    *,
    release: Release | None = None,
    errors: dict[str, str] | None = None,
    preview: bool = False,
    status: int = 200,
    notice: str = "",
    minimum: str | None = None,
    plan: dict[str, Any] | None = None,
    plan_form: dict[str, Any] | None = None,
    plan_errors: dict[str, str] | None = None,
) -> web.Response:
    """The release form; for a stored release also its rollout plan (`plan`, the publishers'
    view of rollouts/view.py) and the plan form's values sent back (`plan_form`)."""
    rendered = None
    if release is not None:
        rendered = render.release(
            request.app[SETTINGS].app_url, resolved.ref, release, request.app[DOWNLOAD_COUNTER]
        )
    context = {
        "repo": repo_context(request, resolved),
        "values": values,
        "release": rendered,
        "draft": release.draft if release is not None else True,
        "rollout": rollout_of(release) if release is not None else None,
        "edit_url": edit_path(resolved, release.tag) if release is not None else "",
        "errors": errors or {},
        "preview": preview,
        "notice": notice,
        "minimum": minimum,  # the channel's minimum version (safety/decide.py)
        # as `forge release publish` warns: the release is saved, but no updater will offer it
        "tag_warning": tag_warning(values["tag_name"]),
        "upload_limit": request.app[SETTINGS].max_upload_bytes,
        "plan": plan,
        "plan_form": plan_form or {},
        "plan_errors": plan_errors or {},
    }
    return console_page(request, TEMPLATE, context, status=status)


@page
async def new_form(request: web.Request) -> web.StreamResponse:
    resolved, _ = await console_repo(request)
    values = {
        "tag_name": "",
        "target_commitish": "",
        "name": "",
        "body": "",
        "prerelease": False,
        "rollout": "100",
    }
    return form_page(request, resolved, values)


@page
async def create(request: web.Request) -> web.StreamResponse:
    resolved, viewer = await console_repo(request)
    form = await checked_form(request)
    values = _values(form)
    action = text_field(form, "action")
    if action == "preview":
        return form_page(request, resolved, values, preview=True)
    data = {**_api_body(values), "draft": action != "publish"}
    try:
        fields = new_release(data)
        release = await writes.create_release(
            request.app, resolved.ref, viewer.id, fields, origin=origin_of(request, "console")
        )
    except ApiError as error:
        errors = field_errors(error, "tag_name")
        return form_page(request, resolved, values, errors=errors, status=error.status)
    return see_other(edit_path(resolved, release.tag))


async def release_of(request: web.Request) -> tuple[Resolved, Viewer, Release]:
    """The repository, the publisher and the release `{tag}` of a console path (drafts too:
    the caller may publish), or the error the API gives."""
    resolved, viewer = await console_repo(request)
    release = await find_release(request, resolved, request.match_info["tag"], by_id=False)
    return resolved, viewer, release


def _done_notice(done: str, files: str) -> str:
    """What the edit page says after an upload (`files`: how many the console's script sent
    at once) or a removal."""
    safety = {
        "withdrawn": "Release withdrawn.",
        "restored": "Release offered again.",
        "safety": "Safety saved.",
    }
    if done in safety:
        return safety[done]
    if done == "uploaded":
        count = int(files) if files.isdigit() and 0 < len(files) < 6 else 1
        return "File uploaded." if count == 1 else f"{count} files uploaded."
    return "File removed." if done == "deleted" else ""


@page
async def edit_form(request: web.Request) -> web.StreamResponse:
    resolved, _, release = await release_of(request)
    notice = _done_notice(request.query.get("done", ""), request.query.get("files", ""))
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    pool = candidates.everything if release.prerelease else candidates.stable
    minimum = minimum_version((v, r) for r in pool if (v := parse_version(r.tag)) is not None)
    plan = await plan_context(request.app[DB_POOL], resolved.ref.repo_id, release.id)
    return form_page(
        request,
        resolved,
        values_of(release),
        release=release,
        notice=notice,
        minimum=None if minimum is None else str(minimum),
        plan=plan,
    )


@page
async def update(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    values = _values(form)
    action = text_field(form, "action")
    if action == "preview":
        return form_page(request, resolved, values, release=release, preview=True)
    data = _api_body(values)
    if not release.draft:
        data.pop("rollout", None)  # a published release's rollout only rises (rollout.py)
    if action in ("draft", "publish"):
        data["draft"] = action == "draft"
    try:
        after = await writes.update_release(
            request.app,
            resolved.ref,
            viewer.id,
            release.id,
            data,
            origin=origin_of(request, "console"),
        )
    except ApiError as error:
        errors = field_errors(error, "tag_name")
        return form_page(
            request, resolved, values, release=release, errors=errors, status=error.status
        )
    if action == "publish":
        return see_other(release_path(resolved, after.tag))
    return see_other(edit_path(resolved, after.tag))
