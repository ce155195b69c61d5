"""Handlers of list, get and latest (docs/releases.md list, get and latest rules): parse, query,
render; the update check has its own module (update_check.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from urllib.parse import urlencode

from aiohttp import web
from forge_common.access import Access
from forge_common.auth import is_anonymous
from forge_common.conditional import etag_of
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.render import dumps

from ..access_keys.signed_urls import handed_out_url
from ..errors import NoReleasesFound, ReleaseNotFound
from ..keys import DOWNLOAD_COUNTER, RELEASE_CACHE
from ..models import Release, Resolved
from ..urls import api_releases_url
from . import queries, render
from .cache import Answer
from .params import Page, flag, page_of, storable_tag
from .resolve import resolve
from .update import STABLE

# Who sees drafts: list rule 4 says administrators (`drafts=true`); a draft fetched by id or tag
# is shown to whoever may publish releases (write), so a publisher can read back a draft.
DRAFT_LISTERS = Access.ADMIN
DRAFT_READERS = Access.WRITE


def answer_of(data: object, headers: dict[str, str] | None = None) -> Answer:
    body = dumps(data)
    return Answer(200, body, etag_of(body), headers=headers or {})


def json_answer(
    request: web.Request, data: object, public: bool, headers: dict[str, str] | None = None
) -> web.Response:
    """A JSON answer with an ETag, honouring If-None-Match (also the compat APIs')."""
    return answer_of(data, headers).respond(request, public)


def _render(request: web.Request, resolved: Resolved, release: Release) -> dict[str, object]:
    return render.release(
        request.app[SETTINGS].app_url,
        resolved.ref,
        release,
        request.app[DOWNLOAD_COUNTER],
        partial(handed_out_url, request),
    )


def link_header(
    request: web.Request,
    base: str,
    page: Page,
    total: int,
    extra: Mapping[str, str],
    limit_name: str = "limit",
) -> str:
    """RFC 8288 `Link` of a paged list; `limit_name` is the page size parameter's name (GitHub's
    is `per_page`). A list read through an update key links signed URLs (never the key:
    docs/access.md "Update keys"), so the next page opens as this one did."""
    last = max(1, -(-total // page.limit))
    links = []

    def url(number: int) -> str:
        query = urlencode({**extra, "page": number, limit_name: page.limit})
        return handed_out_url(request, f"{base}?{query}")

    if page.page < last:
        links.append(f'<{url(page.page + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if page.page > 1:
        links.append(f'<{url(1)}>; rel="first"')
        links.append(f'<{url(min(page.page - 1, last))}>; rel="prev"')
    return ", ".join(links)


@dataclass(frozen=True, slots=True)
class Listing:
    """One page of the release list as a caller may see it (list rules 1-5)."""

    page: Page
    prereleases: bool
    drafts: bool
    total: int
    releases: list[Release]


async def list_page(
    request: web.Request,
    resolved: Resolved,
    *,
    prereleases_default: bool = False,
    drafts_default: bool = False,
    draft_listers: Access = DRAFT_LISTERS,
    query: Mapping[str, str] | None = None,
) -> Listing:
    """The list API's query, shared with the releases page (which shows prereleases unless
    told `prereleases=false`, and drafts to whoever may edit them unless told `drafts=false`)
    and the compat APIs (which pass their parameters translated to ours in `query`)."""
    query = request.query if query is None else query
    page = page_of(query)
    prereleases = flag(query, "prereleases") if "prereleases" in query else prereleases_default
    wanted = flag(query, "drafts") if "drafts" in query else drafts_default
    drafts = wanted and resolved.access >= draft_listers
    pool = request.app[DB_POOL]
    repo_id = resolved.ref.repo_id

    async def read() -> Listing:
        total = await queries.count_releases(pool, repo_id, prereleases=prereleases, drafts=drafts)
        releases = []
        if page.reachable and page.offset < total:
            releases = await queries.list_releases(
                pool,
                repo_id,
                prereleases=prereleases,
                drafts=drafts,
                limit=page.limit,
                offset=page.offset,
            )
        return Listing(page, prereleases, drafts, total, releases)

    # download counts are shown with this process's pending ones: render with no await after
    return await request.app[DOWNLOAD_COUNTER].consistent(read)


async def list_releases(request: web.Request) -> web.Response:
    """GET /api/v2/repos/{owner}/{repo}/releases (list rules 1-5). An anonymous caller's page of
    public releases is kept for a second (read/cache.py `get_list`), dropped sooner when the
    releases change or one of the repository's downloads is counted."""
    resolved = await resolve(request)

    async def page() -> tuple[Answer, bool]:
        listing = await list_page(request, resolved)
        page, total, drafts = listing.page, listing.total, listing.drafts
        extra = {
            k: "true" for k, on in (("prereleases", listing.prereleases), ("drafts", drafts)) if on
        }
        app_url = request.app[SETTINGS].app_url
        base = api_releases_url(app_url, resolved.ref.owner, resolved.ref.name)
        headers = {
            "X-Total-Count": str(total),
            "Access-Control-Expose-Headers": "X-Total-Count, Link",
        }
        if link := link_header(request, base, page, total, extra):
            headers["Link"] = link
        data = [_render(request, resolved, r) for r in listing.releases]
        return answer_of(data, headers), drafts

    return await kept_list(request, resolved, "v2", page)


async def kept_list(
    request: web.Request,
    resolved: Resolved,
    shape: str,
    page: Callable[[], Awaitable[tuple[Answer, bool]]],
) -> web.Response:
    """A list page (`page()`: its answer, and whether it shows drafts) through the list cache: an
    anonymous caller's page of public releases is kept for a second, by API shape and query
    string (the compat APIs' lists share it, compat/handlers.py)."""
    cache = request.app[RELEASE_CACHE]
    # anonymous and public: every such caller gets the same page for the same query string
    shared = resolved.public and is_anonymous(request)
    key = _list_key(shape, request)  # as `fast_list` looks it up
    if not shared:
        answer, drafts = await page()
        return answer.respond(request, resolved.public and not drafts)
    if (kept := cache.get_list(resolved.ref.repo_id, key)) is not None:
        return kept.respond(request, True)

    async def shareable() -> tuple[Answer, bool]:
        answer, drafts = await page()
        return answer, not drafts

    answer, public = await cache.shared_list(resolved.ref.repo_id, key, shareable)
    return answer.respond(request, public)


def _list_key(shape: str, request: web.BaseRequest) -> str:
    """What a list's pages are kept under: the API shape and the query as sent."""
    return f"{shape}?{request.rel_url.raw_query_string}"


def list_key(request: web.BaseRequest, match: Mapping[str, str]) -> str:
    """The version-2 list's key before routing (forge_common.fast_path, routes.py)."""
    return _list_key("v2", request)


def fast_list(
    app: web.Application, request: web.BaseRequest, match: Mapping[str, str], key: str
) -> web.Response | None:
    """The list's kept page before routing (forge_common.fast_path, routes.py): what `kept_list`
    answers an anonymous caller of a repository they may read, without the router and
    middleware chain. A query naming an update key is never kept (its resolution is not public),
    so it is never found here either."""
    cache = app[RELEASE_CACHE]
    entry = cache.readable_by_anyone(request, match["owner"], match["repo"])
    if entry is None:
        return None
    kept = cache.get_list(entry.ref.repo_id, key)
    return kept.respond(request, True) if kept is not None else None


async def find_release(
    request: web.Request,
    resolved: Resolved,
    value: str,
    *,
    by_id: bool = True,
    withdrawn_shown: bool = False,
) -> Release:
    """The release `value` names (get rules 1-2; only a tag when not `by_id`), or
    ReleaseNotFound: drafts only for callers who may publish."""
    if not storable_tag(value):
        raise ReleaseNotFound()
    release_id = positive_int64(value) if by_id else None  # get rule 1: else a tag
    pool = request.app[DB_POOL]

    async def read() -> Release | None:
        if release_id is not None:
            return await queries.release_by_id(pool, resolved.ref.repo_id, release_id)
        return await queries.release_by_tag(pool, resolved.ref.repo_id, value)

    release = await request.app[DOWNLOAD_COUNTER].consistent(read)
    # a withdrawn release is not published any more: only its publishers read it back here, and
    # its readers on its own page (`withdrawn_shown`), which says it was withdrawn and why
    hidden = release is not None and (release.draft or (release.withdrawn and not withdrawn_shown))
    if release is None or (hidden and resolved.access < DRAFT_READERS):
        raise ReleaseNotFound()
    return release


async def get_release(request: web.Request) -> web.Response:
    """GET .../releases/{tag}: a positive int64 is an id, anything else a tag (get rules 1-2)."""
    resolved = await resolve(request)
    release = await find_release(request, resolved, request.match_info["tag"])
    return json_answer(
        request, _render(request, resolved, release), resolved.public and release.published
    )


async def latest_release(request: web.Request) -> web.Response:
    """GET .../releases/latest: the first release of the channel in list order (latest rules)."""
    resolved = await resolve(request)
    channel = request.query.get("channel") or STABLE
    release = await request.app[DOWNLOAD_COUNTER].consistent(
        partial(
            queries.latest_release,
            request.app[DB_POOL],
            resolved.ref.repo_id,
            prereleases=channel != STABLE,
        )
    )
    if release is None:
        raise NoReleasesFound()
    return json_answer(request, _render(request, resolved, release), resolved.public)
