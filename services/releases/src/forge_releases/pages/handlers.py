"""GET /{owner}/{repo} (repository), .../releases (list), .../releases/tag/{tag} (release) and
.../download (download page).

Each page is the matching API call laid out as HTML: the same resolution and access rules
(read/resolve.py), the same queries (read/handlers.py `list_page`, `find_release`) and the
update check's cached candidates and asset table (read/update_check.py, read/update.py), rendered
through the API's own JSON renderer (read/render.py). A page never shows more than that call.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from forge_common.asset_match import facts
from forge_common.auth import is_anonymous
from forge_common.conditional import etag_of
from forge_common.csrf import set_pre_session_cookie
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.pages import mark_page, page, page_context, page_headers, page_response

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import handed_out_url
from ..console.access import console_links
from ..console.releases import edit_path
from ..console.updaters import rollout_of
from ..errors import NoReleasesFound
from ..keys import DOWNLOAD_COUNTER, RELEASE_CACHE
from ..models import Asset, Release, Resolved
from ..read import queries, render
from ..read.handlers import DRAFT_READERS, find_release, list_page
from ..read.resolve import resolve
from ..read.update import STABLE
from ..read.update_check import repo_releases
from ..urls import repo_url
from .cache import PAGE_CACHE, KeptPage, PageKey
from .offers import newest_with_build, offered, page_latest, product_title
from .platforms import HINT_HEADERS, TARGETS, Target, visitor_target


def _release(request: web.Request, resolved: Resolved, release: Release) -> dict[str, Any]:
    """The release exactly as the API renders it (addresses, counts, wire names); read with
    `?key=`, its download URLs are signed as the API's are (docs/access.md "Update keys")."""
    return render.release(
        request.app[SETTINGS].app_url,
        resolved.ref,
        release,
        request.app[DOWNLOAD_COUNTER],
        partial(handed_out_url, request),
    )


def _repo(request: web.Request, resolved: Resolved) -> dict[str, Any]:
    ref = resolved.ref
    url = repo_url(request.app[SETTINGS].app_url, ref.owner, ref.name)
    return {
        "owner": ref.owner,
        "name": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "description": ref.description,
        "url": url,
        "owner_url": f"{request.app[SETTINGS].app_url}{ref.owner}",
    }


def _offers(
    release: Release, rendered: dict[str, Any], target: Target | None
) -> tuple[tuple[Target, dict[str, Any]] | None, list[tuple[Target, dict[str, Any]]]]:
    """The visitor's file (chosen by the feeds' matcher: pages/offers.py) and every other
    platform's."""
    by_id = {asset["id"]: asset for asset in rendered["assets"]}
    picks = {candidate: offered(release, candidate) for candidate in TARGETS}
    mine = None
    others = []
    for candidate, asset in picks.items():
        if asset is None:
            continue
        if candidate == target:
            mine = (candidate, by_id[asset.id])
        elif not _x64_build_again(candidate, asset, picks):
            others.append((candidate, by_id[asset.id]))
    return mine, others


def _x64_build_again(candidate: Target, asset: Asset, picks: dict[Target, Asset | None]) -> bool:
    """Whether the list would name `asset` a second time, for another architecture: a name
    that says no architecture fits any (the matcher's third choice), but electron-builder leaves
    only x64 unnamed, so such a file is listed once, as the platform's x64 build."""
    if candidate.arch == "x64" or facts(asset.name).arch is not None:
        return False
    x64 = next(t for t in TARGETS if t.platform == candidate.platform and t.arch == "x64")
    return picks[x64] is asset


async def _latest_id(request: web.Request, resolved: Resolved) -> int | None:
    """The id of the release the pages call "Latest" (pages/offers.page_latest), from the kept
    candidates."""
    latest = page_latest((await repo_releases(request.app, resolved.ref.repo_id)).stable)
    return latest.id if latest is not None else None


async def _with_stored_counts(request: web.Request, release: Release) -> Release:
    """`release` with its files' download counts as stored now. The kept candidates' counts are
    those of when they were loaded (a download sends no notification), so a page showing them
    beside this process's pending downloads would go 1, 2, 1 after a flush; read as the API
    reads them (counter.consistent), then rendered with no await in between."""
    pool = request.app[DB_POOL]
    stored = await request.app[DOWNLOAD_COUNTER].consistent(
        partial(queries.download_counts, pool, release.id)
    )
    assets = tuple(
        replace(asset, download_count=stored.get(asset.id, asset.download_count))
        for asset in release.assets
    )
    return replace(release, assets=assets)


@page
async def repo_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    latest = page_latest(candidates.stable)
    repo = _repo(request, resolved)
    context: dict[str, Any] = {"repo": repo, "og_url": repo["url"], "latest": None, "offer": None}
    context["og_description"] = repo["description"] or f"{repo['full_name']} on Forge"
    context["console"] = console_links(request, resolved)
    if latest is not None:
        latest = await _with_stored_counts(request, latest)
        rendered = _release(request, resolved, latest)
        context["latest"] = rendered
        context["offer"] = _offers(latest, rendered, visitor_target(request.headers))[0]
    return page_response(
        request, "releases/repo.html", context, public=resolved.public, headers=HINT_HEADERS
    )


@page
async def releases_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    latest_id = await _latest_id(request, resolved)
    # drafts for whoever may edit them (the API lists them to administrators only: list rule 4)
    listing = await list_page(
        request,
        resolved,
        prereleases_default=True,
        drafts_default=True,
        draft_listers=DRAFT_READERS,
    )
    repo = _repo(request, resolved)
    console = console_links(request, resolved)
    last = max(1, -(-listing.total // listing.page.limit))

    def link(number: int) -> str:
        query = {"page": str(number)}
        if listing.page.limit != 30:
            query["limit"] = str(listing.page.limit)
        if not listing.prereleases:
            query["prereleases"] = "false"
        if "drafts" in request.query:
            query["drafts"] = request.query["drafts"]
        return str(request.rel_url.with_query(query))

    context = {
        "repo": repo,
        "latest_id": latest_id,
        # rendered with no await after the listing: its counts and the pending ones agree
        "releases": [_editable(request, resolved, r, console) for r in listing.releases],
        "page": listing.page.page,
        "last": last,
        "total": listing.total,
        "prev_url": link(min(listing.page.page - 1, last)) if listing.page.page > 1 else None,
        "next_url": link(listing.page.page + 1) if listing.page.page < last else None,
        "og_url": f"{repo['url']}/releases",
        "og_description": f"Releases of {repo['full_name']}",
        "console": console,
    }
    return page_response(
        request,
        "releases/releases.html",
        context,
        public=resolved.public and not listing.drafts,
    )


def _editable(
    request: web.Request, resolved: Resolved, release: Release, console: dict[str, bool]
) -> dict[str, Any]:
    """A release of the list, with the console's edit link for a visitor who may use it."""
    rendered = _release(request, resolved, release)
    rendered["edit_url"] = edit_path(resolved, release.tag) if console["publish"] else None
    return rendered


@page
async def release_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    latest_id = await _latest_id(request, resolved)
    tag = request.match_info["tag"]
    release = await find_release(request, resolved, tag, by_id=False, withdrawn_shown=True)
    rendered = _release(request, resolved, release)
    # the digest recorded at upload, so a visitor can check the file they downloaded
    for shown, stored in zip(rendered["assets"], release.assets, strict=True):
        shown["sha256"] = stored.sha256
    context = {
        "repo": _repo(request, resolved),
        "release": rendered,
        "latest_id": latest_id,
        "og_url": rendered["html_url"],
        "og_description": (release.note[:200] or release.title or release.tag),
        "console": console_links(request, resolved),
        "rollout": rollout_of(release),
        "edit_url": edit_path(resolved, release.tag),
    }
    return page_response(
        request,
        "releases/release.html",
        context,
        public=resolved.public and release.published,
    )


def _page_key(request: web.Request, repo_id: int, target: Target | None) -> PageKey:
    visitor = f"{target.platform}-{target.arch}" if target else ""
    return (repo_id, request.rel_url.raw_query_string, visitor)


def _kept_download_page(request: web.Request) -> web.Response | None:
    """The hot path, with no await and no query (like the update check's): an anonymous visit
    of a public repository whose candidates and page are both kept. None: take the full path."""
    if names_key(request):
        return None  # a key is checked on the full path, as the update check does
    match = request.match_info
    entry = request.app[RELEASE_CACHE].readable_by_anyone(request, match["owner"], match["repo"])
    if entry is None:
        return None
    candidates = request.app[RELEASE_CACHE].get_repo(entry.ref.repo_id)
    if candidates is None:
        return None
    key = _page_key(request, entry.ref.repo_id, visitor_target(request.headers))
    kept = request.app[PAGE_CACHE].get(key, candidates)
    return kept.respond(request) if kept is not None else None


@mark_page
async def download_page(request: web.Request) -> web.StreamResponse:
    """The latest release of the channel (stable unless `?channel=`), the visitor's file first."""
    kept = _kept_download_page(request)
    return kept if kept is not None else await _download_page(request)


@page
async def _download_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    channel = request.query.get("channel") or STABLE
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    target = visitor_target(request.headers)
    releases = candidates.stable if channel == STABLE else candidates.everything
    release = newest_with_build(releases, target)
    if release is None:
        raise NoReleasesFound()  # the latest API's answer for an empty channel
    rendered = _release(request, resolved, release)
    mine, others = _offers(release, rendered, target)
    repo = _repo(request, resolved)
    context = {
        **page_context(request),
        "repo": repo,
        "release": rendered,
        "channel": channel,
        "stable": channel == STABLE,
        "latest_id": latest.id if (latest := page_latest(candidates.stable)) else None,
        # a newer prerelease than the stable release offered: only then is there one to link
        "has_prerelease": any(r.prerelease for r in candidates.everything),
        "target": target,
        "mine": mine,
        "others": others,
        "product": (product := product_title(repo["name"], release)),
        "og_url": f"{repo['url']}/download",
        "og_description": f"Download {product} {release.tag}",
    }
    body = aiohttp_jinja2.render_string("releases/download.html", request, context).encode()
    headers = page_headers(request, public=resolved.public, extra=HINT_HEADERS)
    headers.update({"Content-Type": "text/html; charset=utf-8", "ETag": etag_of(body)})
    kept = KeptPage(body, headers)
    if resolved.public and is_anonymous(request):
        key = _page_key(request, resolved.ref.repo_id, target)
        request.app[PAGE_CACHE].put(key, candidates, kept)
    response = kept.respond(request)
    set_pre_session_cookie(request, response)
    return response
