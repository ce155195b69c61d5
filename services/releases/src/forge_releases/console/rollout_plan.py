"""The release's rollout plan on its console page (docs/console.md, docs/rollouts.md): the state
and why, the steps and the history; forms that set the plan, pause, resume, jump to a step and
finish at once. Each calls the API's own functions (rollouts/actions.py), recorded in the audit
log as the console's."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.csrf import checked_form, text_field
from forge_common.errors import ApiError, Unprocessable
from forge_common.keys import DB_POOL
from forge_common.pages import page, see_other

from ..rollouts import actions
from ..rollouts.audit import request_actor
from ..rollouts.plan import plan_of
from ..rollouts.view import plan_context
from .forms import checkbox
from .releases import edit_path, form_page, release_of, values_of

PLAN_ANCHOR = "#rollout-plan"


def _steps(text: str) -> list[dict[str, int]]:
    """`percent hold_seconds [min_installs]` a line (or separated by commas)."""
    steps = []
    for line in text.replace(",", "\n").splitlines():
        words = line.replace("%", " ").split()
        if not words:
            continue
        if not 2 <= len(words) <= 3 or not all(word.isdigit() for word in words):
            raise Unprocessable(
                f"{line.strip()!r}: write each step as a percentage, the seconds to hold it and "
                "optionally the installs needed, such as '5 3600' or '25 86400 100'",
                field="plan_steps",
            )
        numbers = [int(word) for word in words]
        steps.append(dict(zip(("percent", "hold_seconds", "min_installs"), numbers, strict=False)))
    return steps


def _body(form: Any) -> dict[str, Any]:
    return {
        "steps": _steps(text_field(form, "plan_steps")),
        "on_failure": text_field(form, "on_failure") or "halt",
        "gates": {
            "uptake": {"enabled": checkbox(form, "gate_uptake")},
            "external": {"enabled": checkbox(form, "gate_external")},
        },
    }


async def _act(request: web.Request, action: str) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    actor = request_actor(request, viewer)
    try:
        if action == "set":
            plan = plan_of(_body(form))
            await actions.set_plan(request.app, resolved.ref, actor, release.id, plan)
        else:
            step = None
            if action == "jump":
                raw = text_field(form, "step").strip()
                if not raw.isdigit():
                    raise Unprocessable("choose a step", field="plan_step")
                step = int(raw) - 1  # the page counts from 1
            await actions.act(request.app, resolved.ref, actor, release.id, action, step)
    except ApiError as error:
        plan_view = await plan_context(request.app[DB_POOL], resolved.ref.repo_id, release.id)
        field = error.field if isinstance(error, Unprocessable) and error.field else "plan"
        errors = {field if field.startswith("plan") else "plan": error.message}
        return form_page(
            request, resolved, values_of(release), release=release, status=error.status,
            plan=plan_view, plan_form=dict(form), plan_errors=errors,
        )  # fmt: skip
    return see_other(edit_path(resolved, release.tag) + PLAN_ANCHOR)


@page
async def set_plan(request: web.Request) -> web.StreamResponse:
    return await _act(request, "set")


@page
async def pause(request: web.Request) -> web.StreamResponse:
    return await _act(request, "pause")


@page
async def resume(request: web.Request) -> web.StreamResponse:
    return await _act(request, "resume")


@page
async def jump(request: web.Request) -> web.StreamResponse:
    return await _act(request, "jump")


@page
async def finish(request: web.Request) -> web.StreamResponse:
    return await _act(request, "finish")
