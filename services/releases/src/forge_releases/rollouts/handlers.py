"""The rollout plan's API (version 2, docs/rollouts.md):

    PUT  /api/v2/repos/{owner}/{repo}/releases/{release_id}/rollout_plan          200 plan
    GET  .../rollout_plan                                                         200 plan
    POST .../rollout_plan/pause | resume | finish                                 200 plan
    POST .../rollout_plan/jump  {"step": N} (an index in `steps`)                 200 plan
    POST .../releases/{release_id}/health  {"sessions": N, "crashed_sessions": M} 204

Access: the repository is resolved as on the read side (strangers to a private repository get
404); changing anything needs publishing access (write). Readers see the plan's state and the
reason's summary; the figures (insights' counts, posted health figures) only publishers see,
as insights.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from forge_common.access import Access
from forge_common.body import optional_int, read_json_object
from forge_common.errors import Unprocessable
from forge_common.keys import DB_POOL
from forge_common.render import json_response

from ..errors import ReleaseNotFound, RolloutPlanNotFound
from ..publish.handlers import publisher, release_id_of
from ..read.queries import release_by_id
from ..read.resolve import resolve
from . import actions, queries
from .audit import request_actor
from .plan import MAX_COUNT, plan_of
from .view import plan_json

_NO_STORE = {"Cache-Control": "no-store"}


async def _answer(request: web.Request, repo_id: int, release_id: int, full: bool) -> web.Response:
    plan = await queries.plan_of(request.app[DB_POOL], repo_id, release_id)
    if plan is None:
        if await release_by_id(request.app[DB_POOL], repo_id, release_id) is None:
            raise ReleaseNotFound()
        raise RolloutPlanNotFound()
    history = await queries.events_of(request.app[DB_POOL], release_id) if full else []
    return json_response(plan_json(plan, history, full=full), headers=_NO_STORE)


async def put_plan(request: web.Request) -> web.Response:
    ref, viewer = await publisher(request)
    release_id = release_id_of(request)
    plan = plan_of(await read_json_object(request))
    await actions.set_plan(request.app, ref, request_actor(request, viewer), release_id, plan)
    return await _answer(request, ref.repo_id, release_id, True)


async def get_plan(request: web.Request) -> web.Response:
    resolved = await resolve(request)
    release_id = release_id_of(request)
    release = await release_by_id(request.app[DB_POOL], resolved.ref.repo_id, release_id)
    full = resolved.access >= Access.WRITE
    if release is None or (release.draft and not full):  # drafts are the publishers'
        raise ReleaseNotFound()
    return await _answer(request, resolved.ref.repo_id, release_id, full)


def _action(name: str) -> Any:
    async def handler(request: web.Request) -> web.Response:
        ref, viewer = await publisher(request)
        release_id = release_id_of(request)
        step = None
        if name == "jump":
            body = await read_json_object(request)
            step = optional_int(body, "step", low=0, high=1000)
            if step is None:
                raise Unprocessable("step is required", field="step")
        await actions.act(request.app, ref, request_actor(request, viewer), release_id, name, step)
        return await _answer(request, ref.repo_id, release_id, True)

    handler.__name__ = f"{name}_plan"
    return handler


pause_plan, resume_plan = _action("pause"), _action("resume")
jump_plan, finish_plan = _action("jump"), _action("finish")


async def post_health(request: web.Request) -> web.Response:
    ref, _ = await publisher(request)
    release_id = release_id_of(request)
    body = await read_json_object(request)
    sessions = optional_int(body, "sessions", low=0, high=MAX_COUNT)
    crashed = optional_int(body, "crashed_sessions", low=0, high=MAX_COUNT)
    if sessions is None or crashed is None:
        raise Unprocessable("sessions and crashed_sessions are required", field="sessions")
    if crashed > sessions:
        raise Unprocessable("crashed_sessions must not exceed sessions", field="crashed_sessions")
    if await release_by_id(request.app[DB_POOL], ref.repo_id, release_id) is None:
        raise ReleaseNotFound()
    await queries.put_health(request.app[DB_POOL], release_id, sessions, crashed)
    return web.Response(status=204, headers=_NO_STORE)
