"""How every feed answers: the repository and its releases come from the cache the update check
uses (read/update_check.py, invalidated on publish through the change notifications), and a
feed's answer is prepared once down to its bytes and kept with them, like the check's. A kept
answer is given before routing like the check's (`fast_key`, registered in routes.py), under
the key the feed's record makes from the path and query (feed.py)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web
from forge_common.asset_match import canonical_arch
from forge_common.conditional import etag_of

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import signed
from ..errors import NoReleasesFound
from ..httpcache import cache_headers
from ..keys import INSIGHTS, RELEASE_CACHE
from ..models import Asset, Release
from ..read.cache import Answer, RepoReleases
from ..read.resolve import resolve
from ..read.update import STABLE
from ..read.update_check import repo_releases
from .feed import Feed, Link
from .links import asset_url

TEXT = "text/plain; charset=utf-8"
YAML = "text/yaml; charset=utf-8"

Built = Answer | str
Build = Callable[[RepoReleases, Link], Built | Awaitable[Built]]
# (the releases, the key a request is known by) -> the key its answer is kept under
KeptAs = Callable[[RepoReleases, str], Awaitable[str]]


def fast_key(feed: Feed) -> Callable[[web.BaseRequest, Mapping[str, str]], str | None]:
    """A feed route's key before routing (forge_common.fast_path, routes.py), or None for a
    request naming an update key: its answer holds URLs signed for that caller, never shared."""
    key_of = feed.key_of

    def key(request: web.BaseRequest, match: Mapping[str, str]) -> str | None:
        if request.rel_url.raw_query_string and names_key(request):
            return None
        return key_of(match, request.query)

    return key


def routed_key(feed: Feed, request: web.Request) -> str:
    """The key of the answer to `request`, routed to `feed`."""
    return feed.key_of(request.match_info, request.query)


async def serve(
    request: web.Request, cache_key: str, build: Build, kept_as: KeptAs | None = None
) -> web.Response:
    """The prepared answer under `cache_key`, or `build` it; a str from `build` is a URL to
    redirect to (an uploaded file, served as is). With `kept_as`, the answer is kept under the
    key it makes from the releases and `cache_key` (a feed's band of required steps, feed.py),
    and counted under `cache_key`."""
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    keyed = signed(request)
    cache = request.app[RELEASE_CACHE]
    counted_key = cache_key
    if kept_as is not None:
        cache_key = await kept_as(releases, cache_key)
    answer = None if keyed else cache.kept(releases, cache_key)
    if answer is None:
        ref = resolved.ref

        def link(release: Release, asset: Asset) -> str:
            return asset_url(request, ref, release, asset)

        outcome = build(releases, link)
        built = await outcome if inspect.isawaitable(outcome) else outcome
        if isinstance(built, str):
            request.app[INSIGHTS].answered(resolved.ref.repo_id, counted_key, b"")
            return web.Response(
                status=302, headers={"Location": built, **cache_headers(resolved.public)}
            )
        answer = built
        if not keyed:
            cache.remember_answer(releases, cache_key, answer)
    request.app[INSIGHTS].answered(resolved.ref.repo_id, counted_key, answer.body)
    return answer.respond(request, resolved.public)


def arch_of(raw: str) -> str:
    return canonical_arch(raw) or raw.lower()


def text_answer(text: str | None, content_type: str) -> Answer:
    if text is None:
        raise NoReleasesFound()
    body = text.encode()
    return Answer(200, body, etag_of(body), content_type)


def channel_of(request: web.BaseRequest) -> str:
    return request.query.get("channel") or STABLE


def nowhere(release: Release, asset: Asset) -> str:
    """The link of a body made again only to read the version it offers."""
    return "/"
