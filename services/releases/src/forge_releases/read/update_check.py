"""GET .../releases/update, the hot path: desktop applications call it on every start.

A repeated check of a cached repository is answered from prepared bytes (update_answer.py), found
by the raw query string, without any query; otherwise the candidates come from the cache or the
database (candidates.py) and the choice from update.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from aiohttp import web
from forge_common.keys import SETTINGS

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import handed_out_url, signed
from ..errors import InvalidVersion
from ..keys import INSIGHTS, RELEASE_CACHE
from ..models import RepoRef
from .cache import RepoReleases
from .candidates import repo_releases
from .render import UrlMap, unchanged
from .resolve import kept_for_anonymous, resolve
from .update import STABLE, BadVersion, UpdateQuery
from .update_answer import Answer, prepare_answer


def cached_answer(request: web.Request, key: str) -> web.Response | None:
    """The hot path, with no await and no query: an anonymous request for public data whose
    repository and answer (under `key`) are both cached. None: take the full path. The update
    feeds (feeds/handlers.py) share it."""
    match = request.match_info
    return prepared_answer(request.app, request, match["owner"], match["repo"], key)


def prepared_answer(
    app: web.Application, request: web.BaseRequest, owner: str, repo: str, key: str
) -> web.Response | None:
    """`cached_answer` for a request that may not be routed yet (`fast_update_check`)."""
    entry = kept_for_anonymous(app, request, owner, repo)
    if entry is None:
        return None
    cache = app[RELEASE_CACHE]
    releases = cache.get_repo(entry.ref.repo_id)
    if releases is None:
        return None
    answer = releases.answers.get(key)
    if answer is None:
        return None
    cache.hits += 1
    app[INSIGHTS].checked(entry.ref.repo_id, key, answer.body)
    return answer.respond(request, True)


def fast_update_check(
    app: web.Application, request: web.BaseRequest, match: Mapping[str, str]
) -> web.Response | None:
    """The update check's kept answer before routing (forge_common.fast_path, routes.py): what
    `update_check` answers from `cached_answer`, without the router and middleware chain."""
    return prepared_answer(
        app, request, match["owner"], match["repo"], request.rel_url.raw_query_string
    )


async def update_check(request: web.Request) -> web.Response:
    """GET .../releases/update (update rules 1-9): from a prepared answer when there is one."""
    if (cached := cached_answer(request, request.rel_url.raw_query_string)) is not None:
        return cached
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    if signed(request):
        # authorised by an update key: its URLs are signed for this caller, so the answer is
        # neither shared nor kept (docs/access.md "Update keys")
        url_for = partial(handed_out_url, request)
        own = _prepare(request, resolved.ref, releases, url_for)
        request.app[INSIGHTS].answered(
            resolved.ref.repo_id, request.rel_url.raw_query_string, own.body
        )
        return own.respond(request, False)
    raw_query = request.rel_url.raw_query_string
    answer = releases.answers.get(raw_query)
    if answer is None:
        answer = _prepare(request, resolved.ref, releases)
        if not names_key(request):
            # the hot path serves a kept answer to anyone sending this query without a token: it
            # must never skip the key check (a token's request with `&key=junk`, say)
            request.app[RELEASE_CACHE].remember_answer(releases, raw_query, answer)
    else:
        request.app[RELEASE_CACHE].hits += 1
    request.app[INSIGHTS].answered(resolved.ref.repo_id, raw_query, answer.body)
    return answer.respond(request, resolved.public)


def _prepare(
    request: web.Request, ref: RepoRef, releases: RepoReleases, url_for: UrlMap = unchanged
) -> Answer:
    settings = request.app[SETTINGS]
    query = request.query
    check = UpdateQuery(
        version=query.get("version", ""),
        platform=query.get("platform") or settings.server_os,
        arch=query.get("arch") or settings.server_arch,
        channel=query.get("channel") or STABLE,
    )
    try:
        return prepare_answer(
            settings.app_url,
            ref.owner,
            ref.name,
            releases.stable,
            releases.everything,
            check,
            url_for,
        )
    except BadVersion:
        raise InvalidVersion(check.version) from None
