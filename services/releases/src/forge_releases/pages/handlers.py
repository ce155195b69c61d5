"""GET /{owner}/{repo} (repository), .../releases (list), .../releases/tag/{tag} (release) and
.../download (download page).

Each page is the matching API call laid out as HTML: the same resolution and access rules
(read/resolve.py), the same queries (read/handlers.py `list_page`, `find_release`) and the
update check's cached candidates and asset table (read/update_check.py, read/update.py), rendered
through the API's own JSON renderer (read/render.py). A page never shows more than that call.
"""

from __future__ import annotations

from typing import Any

import aiohttp_jinja2
from aiohttp import web
from forge_common.asset_match import match_asset
from forge_common.auth import is_anonymous
from forge_common.conditional import etag_of
from forge_common.keys import SETTINGS
from forge_common.pages import page, page_headers, page_response

from ..access_keys.grant import names_key
from ..errors import NoReleasesFound
from ..keys import DOWNLOAD_COUNTER, RELEASE_CACHE
from ..models import Release, Resolved
from ..read import render
from ..read.handlers import find_release, list_page
from ..read.resolve import resolve
from ..read.update import STABLE
from ..read.update_check import repo_releases
from ..urls import repo_url
from .cache import PAGE_CACHE, KeptPage, PageKey
from .platforms import HINT_HEADERS, TARGETS, Target, visitor_target


def _release(request: web.Request, resolved: Resolved, release: Release) -> dict[str, Any]:
    """The release exactly as the API renders it (addresses, counts, wire names)."""
    return render.release(
        request.app[SETTINGS].app_url, resolved.ref, release, request.app[DOWNLOAD_COUNTER]
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
    """The visitor's file (chosen by the update check's table) and every other platform's."""
    by_id = {asset["id"]: asset for asset in rendered["assets"]}
    mine = None
    others = []
    for candidate in TARGETS:
        asset = match_asset(release.assets, candidate.platform, candidate.arch)
        if asset is None:
            continue
        if candidate == target:
            mine = (candidate, by_id[asset.id])
        else:
            others.append((candidate, by_id[asset.id]))
    return mine, others


@page
async def repo_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    candidates = await repo_releases(request.app, resolved.ref.repo_id)
    latest = candidates.stable[0] if candidates.stable else None  # the latest API's answer
    repo = _repo(request, resolved)
    context: dict[str, Any] = {"repo": repo, "og_url": repo["url"], "latest": None, "offer": None}
    context["og_description"] = repo["description"] or f"{repo['full_name']} on Forge"
    if latest is not None:
        rendered = _release(request, resolved, latest)
        context["latest"] = rendered
        context["offer"] = _offers(latest, rendered, visitor_target(request.headers))[0]
    return page_response(
        request, "releases/repo.html", context, public=resolved.public, headers=HINT_HEADERS
    )


@page
async def releases_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    listing = await list_page(request, resolved, prereleases_default=True)
    repo = _repo(request, resolved)
    last = max(1, -(-listing.total // listing.page.limit))

    def link(number: int) -> str:
        query = {"page": str(number)}
        if listing.page.limit != 30:
            query["limit"] = str(listing.page.limit)
        if not listing.prereleases:
            query["prereleases"] = "false"
        if listing.drafts:
            query["drafts"] = "true"
        return str(request.rel_url.with_query(query))

    context = {
        "repo": repo,
        "releases": [_release(request, resolved, r) for r in listing.releases],
        "page": listing.page.page,
        "last": last,
        "total": listing.total,
        "prev_url": link(min(listing.page.page - 1, last)) if listing.page.page > 1 else None,
        "next_url": link(listing.page.page + 1) if listing.page.page < last else None,
        "og_url": f"{repo['url']}/releases",
        "og_description": f"Releases of {repo['full_name']}",
    }
    return page_response(
        request,
        "releases/releases.html",
        context,
        public=resolved.public and not listing.drafts,
    )


@page
async def release_page(request: web.Request) -> web.StreamResponse:
    resolved = await resolve(request)
    release = await find_release(request, resolved, request.match_info["tag"], by_id=False)
    rendered = _release(request, resolved, release)
    context = {
        "repo": _repo(request, resolved),
        "release": rendered,
        "og_url": rendered["html_url"],
        "og_description": (release.note[:200] or release.title or release.tag),
    }
    return page_response(
        request,
        "releases/release.html",
        context,
        public=resolved.public and not release.draft,
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
    if not releases:
        raise NoReleasesFound()  # the latest API's answer for an empty channel
    release = releases[0]
    rendered = _release(request, resolved, release)
    mine, others = _offers(release, rendered, target)
    repo = _repo(request, resolved)
    context = {
        "repo": repo,
        "release": rendered,
        "channel": channel,
        "stable": channel == STABLE,
        "target": target,
        "mine": mine,
        "others": others,
        "og_url": f"{repo['url']}/download",
        "og_description": f"Download {repo['name']} {release.tag}",
    }
    body = aiohttp_jinja2.render_string("releases/download.html", request, context).encode()
    headers = page_headers(request, public=resolved.public, extra=HINT_HEADERS)
    headers.update({"Content-Type": "text/html; charset=utf-8", "ETag": etag_of(body)})
    kept = KeptPage(body, headers)
    if resolved.public and is_anonymous(request):
        key = _page_key(request, resolved.ref.repo_id, target)
        request.app[PAGE_CACHE].put(key, candidates, kept)
    return kept.respond(request)
