"""GET .../releases/update, the hot path: desktop applications call it on every start.

Read in this order: a repeated check is answered before routing (forge_common.fast_path) from
the answer kept under its raw query string (`update_check_key`; `kept_response`, with no await
and no query); anything else is routed through the middleware to `update_check`, which
resolves the repository (resolve.py), takes its candidates from the cache or the database
(`repo_releases`), looks the same kept answer up (`ReleaseCache.kept`, cache.py), and otherwise
decides (update.py, the rules as pure functions) and prepares the answer down to its bytes
(`prepare_answer`), which the cache keeps. The target that justifies the fast lane is in
docs/decisions.md "The update check".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from aiohttp import web
from forge_common.conditional import etag_of
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import dumps, rfc3339
from forge_common.versions import parse_version

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import handed_out_url, signed
from ..errors import InvalidVersion
from ..keys import INSIGHTS, RELEASE_CACHE
from ..models import Asset, Release, RepoRef
from ..urls import download_url
from . import queries
from .cache import NO_UPDATE, Answer, RepoReleases
from .render import UrlMap, unchanged
from .resolve import resolve
from .update import STABLE, WINDOWS_PLATFORMS, BadVersion, UpdateQuery, decide_update, windows_urls


def update_check_key(request: web.BaseRequest, match: Mapping[str, str]) -> str:
    """What the update check's answers are kept under: the raw query string (forge_common.fast_path,
    routes.py)."""
    return request.rel_url.raw_query_string


def kept_response(
    app: web.Application,
    request: web.BaseRequest,
    match: Mapping[str, str],
    key: str,
    *,
    kept_as: Callable[[RepoReleases, str], str | None] | None = None,
) -> web.Response | None:
    """The answer kept under `key` (or under `kept_as` of it: a feed's band of required steps,
    feeds/feed.py) for the repository of `match` (`owner`, `repo`), for an anonymous caller of a
    repository anyone may read, with no await; None: take the full path. What the update check
    and the feeds (feeds/serving.py) give before routing; counted under `key`."""
    cache = app[RELEASE_CACHE]
    entry = cache.readable_by_anyone(request, match["owner"], match["repo"])
    if entry is None:
        return None
    releases = cache.get_repo(entry.ref.repo_id)
    if releases is None:
        return None
    kept_key = key if kept_as is None else kept_as(releases, key)
    if kept_key is None:
        return None
    answer = cache.kept(releases, kept_key)
    if answer is None:
        return None
    app[INSIGHTS].checked(entry.ref.repo_id, key, answer.body)  # counted: docs/insights.md
    return answer.respond(request, True)


async def update_check(request: web.Request) -> web.Response:
    """GET .../releases/update (update rules 1-9): from a kept answer when there is one."""
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    if signed(request):
        # authorised by an update key: its URLs are signed for this caller, so the answer is
        # neither shared nor kept (docs/access.md "Update keys")
        url_for = partial(handed_out_url, request)
        own = _prepare(request, resolved.ref, releases, url_for)
        request.app[INSIGHTS].answered(
            resolved.ref.repo_id, update_check_key(request, request.match_info), own.body
        )
        return own.respond(request, False)
    raw_query = update_check_key(request, request.match_info)
    cache = request.app[RELEASE_CACHE]
    answer = cache.kept(releases, raw_query)
    if answer is None:
        answer = _prepare(request, resolved.ref, releases)
        if not names_key(request):
            # the fast lane serves a kept answer to anyone sending this query without a token:
            # it must never skip the key check (a token's request with `&key=junk`, say)
            cache.remember_answer(releases, raw_query, answer)
    request.app[INSIGHTS].answered(resolved.ref.repo_id, raw_query, answer.body)
    return answer.respond(request, resolved.public)


async def repo_releases(app: web.Application, repo_id: int) -> RepoReleases:
    """A repository's update-check candidates, from the cache or (on a miss) the database."""
    cache = app[RELEASE_CACHE]
    cached = cache.get_repo(repo_id)
    if cached is not None:
        return cached
    token = cache.token()
    pool = app[DB_POOL]
    stable, everything = await queries.candidates(pool, repo_id)
    withdrawn = withdrawn_versions(await queries.withdrawn_tags(pool, repo_id))
    loaded = RepoReleases(tuple(stable), tuple(everything), withdrawn=withdrawn)
    cache.put_repo(repo_id, loaded, token)
    return loaded


def withdrawn_versions(tags: Sequence[str]) -> frozenset[str]:
    """The versions (as semver prints them) of withdrawn tags that parse as versions."""
    versions = (parse_version(tag) for tag in tags)
    return frozenset(str(version) for version in versions if version is not None)


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


def prepare_answer(
    app_url: str,
    owner: str,
    repo: str,
    stable: Sequence[Release],
    everything: Sequence[Release],
    query: UpdateQuery,
    url_for: UrlMap = unchanged,
) -> Answer:
    """The whole check, down to the bytes sent (update rules 8-9 give the body). Raises
    BadVersion."""
    found = decide_update(stable, everything, query)
    if found is None:
        return NO_UPDATE
    release, asset = found
    body = dumps(update_body(app_url, owner, repo, release, asset, query.platform, url_for))
    return Answer(200, body, etag_of(body))


def update_body(
    app_url: str,
    owner: str,
    repo: str,
    release: Release,
    asset: Asset,
    platform: str,
    url_for: UrlMap = unchanged,
) -> dict[str, Any]:
    """Rules 8-9: the AppUpdateResponse; `mandatory` and empty platform members are omitted.
    Every URL goes through `url_for` (signed for update keys: access_keys/signed_urls.py)."""

    def url(name: str) -> str:
        return url_for(download_url(app_url, owner, repo, release.tag, name))

    info: dict[str, Any] = {}
    if platform in WINDOWS_PLATFORMS:
        releases_file, nupkg = windows_urls(release.assets)
        if releases_file is not None:
            info["releases_url"] = url(releases_file.name)
        if nupkg is not None:
            info["nupkg_url"] = url(nupkg.name)
    if asset.size:
        info["size"] = asset.size
    return {
        "url": url(asset.name),
        "name": release.tag,
        "notes": release.note,
        "pub_date": rfc3339(release.created_at),
        "platform": info,
    }
