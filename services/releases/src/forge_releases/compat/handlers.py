"""Read handlers of both compat shapes (docs/compat.md): the version-2 read side's resolution,
queries and caching (read/handlers.py), rendered by gitea.py or github.py.

Both platforms list prereleases by default; drafts are listed to whoever may list them in
version 2 (repository administrators), as both platforms list them to their publishers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, Protocol

from aiohttp import web
from forge_common.accounts.models import Repository
from forge_common.accounts.queries import repository_by_name
from forge_common.errors import RepoNotFound
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL, SETTINGS

from ..access_keys.signed_urls import CREDENTIAL_PARAMS, handed_out_url
from ..counter import DownloadCounter
from ..downloads.files import serve_asset
from ..errors import AssetNotFound, NoReleasesFound, ReleaseNotFound
from ..keys import DOWNLOAD_COUNTER
from ..models import Release, RepoRef, Resolved
from ..read import queries
from ..read.cache import Answer
from ..read.handlers import (
    DRAFT_READERS,
    answer_of,
    find_release,
    json_answer,
    kept_list,
    link_header,
    list_page,
)
from ..read.params import flag
from ..read.render import UrlMap
from ..read.resolve import resolve
from . import gitea, github, mapping


class Shape(Protocol):
    """gitea.release or github.release."""

    def __call__(
        self, app_url: str, ref: RepoRef, rel: Release, counter: DownloadCounter, url_for: UrlMap
    ) -> dict[str, Any]: ...


_EXPOSE = {"Access-Control-Expose-Headers": "X-Total-Count, Link"}


def _shaped(request: web.Request, shape: Shape, ref: RepoRef, release: Release) -> dict[str, Any]:
    """Every download URL handed out passes handed_out_url: signed when an update key authorised
    the read (docs/access.md "Update keys"), as on version 2."""
    app_url, counter = request.app[SETTINGS].app_url, request.app[DOWNLOAD_COUNTER]
    return shape(app_url, ref, release, counter, partial(handed_out_url, request))


def _answer(
    request: web.Request, resolved: Resolved, release: Release, shape: Shape
) -> web.Response:
    data = _shaped(request, shape, resolved.ref, release)
    return json_answer(request, data, resolved.public and not release.draft)


async def _listed(
    request: web.Request, shape: Shape, root: str, ours: Mapping[str, str], limit_name: str
) -> web.Response:
    """One page of releases with `X-Total-Count` and `Link`; `ours` is the caller's query in
    version-2 names (read/params.py)."""
    resolved = await resolve(request)

    async def page() -> tuple[Answer, bool]:
        listing = await list_page(request, resolved, query=ours)
        app_url = request.app[SETTINGS].app_url
        base = f"{mapping.repo_api_url(app_url, root, resolved.ref)}/releases"
        # the caller's own filters stay in the page links, under the caller's names; what
        # authorised the read through a key does not (link_header signs the links instead)
        dropped = {"page", limit_name, *CREDENTIAL_PARAMS}
        kept = {k: v for k, v in request.query.items() if k not in dropped}
        headers = {"X-Total-Count": str(listing.total), **_EXPOSE}
        if link := link_header(request, base, listing.page, listing.total, kept, limit_name):
            headers["Link"] = link
        data = [_shaped(request, shape, resolved.ref, r) for r in listing.releases]
        return answer_of(data, headers), listing.drafts

    return await kept_list(request, resolved, root, page)


async def release_by_id(request: web.Request, resolved: Resolved) -> Release:
    """`{release_id}` of the path: a positive int64, never a tag."""
    value = request.match_info["release_id"]
    if positive_int64(value) is None:
        raise ReleaseNotFound()
    return await find_release(request, resolved, value)


async def _latest(request: web.Request, shape: Shape) -> web.Response:
    """Both platforms' latest: the newest release that is neither a draft nor a prerelease."""
    resolved = await resolve(request)
    release = await request.app[DOWNLOAD_COUNTER].consistent(
        partial(
            queries.latest_release, request.app[DB_POOL], resolved.ref.repo_id, prereleases=False
        )
    )
    if release is None:
        raise NoReleasesFound()
    return _answer(request, resolved, release, shape)


async def _by_tag(request: web.Request, shape: Shape) -> web.Response:
    resolved = await resolve(request)
    release = await find_release(request, resolved, request.match_info["tag"], by_id=False)
    return _answer(request, resolved, release, shape)


async def _by_id(request: web.Request, shape: Shape) -> web.Response:
    resolved = await resolve(request)
    return _answer(request, resolved, await release_by_id(request, resolved), shape)


async def _assets(request: web.Request, shape: Shape) -> web.Response:
    resolved = await resolve(request)
    release = await release_by_id(request, resolved)
    data = _shaped(request, shape, resolved.ref, release)["assets"]
    return json_answer(request, data, resolved.public and not release.draft)


async def _repository(request: web.Request) -> tuple[Resolved, Repository]:
    resolved = await resolve(request)
    repo = await repository_by_name(request.app[DB_POOL], resolved.ref.owner_id, resolved.ref.name)
    if repo is None:  # deleted since it was resolved
        raise RepoNotFound()
    return resolved, repo


# --- Gitea: /api/v1/repos/{owner}/{repo}... -------------------------------------------------


async def gitea_list(request: web.Request) -> web.Response:
    """`page`, `limit`; `draft=false` hides drafts, `pre-release=false` hides prereleases."""
    query = request.query
    ours = {
        "page": query.get("page", ""),
        "limit": query.get("limit", ""),
        "prereleases": "false" if _false(query, "pre-release") else "true",
        "drafts": "false" if _false(query, "draft") else "true",
    }
    return await _listed(request, gitea.release, mapping.GITEA_ROOT, ours, "limit")


def _false(query: Mapping[str, str], name: str) -> bool:
    return name in query and not flag(query, name)


def _in_shape(
    read: Callable[[web.Request, Shape], Awaitable[web.Response]], shape: Shape
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler answering `read` in `shape`."""

    async def handler(request: web.Request) -> web.Response:
        return await read(request, shape)

    return handler


gitea_latest = _in_shape(_latest, gitea.release)
gitea_by_tag = _in_shape(_by_tag, gitea.release)
gitea_by_id = _in_shape(_by_id, gitea.release)
gitea_assets = _in_shape(_assets, gitea.release)


async def gitea_asset(request: web.Request) -> web.Response:
    resolved = await resolve(request)
    release = await release_by_id(request, resolved)
    asset_id = positive_int64(request.match_info["asset_id"])
    data = _shaped(request, gitea.release, resolved.ref, release)["assets"]
    found = next((a for a in data if a["id"] == asset_id), None)
    if found is None:
        raise AssetNotFound()
    return json_answer(request, found, resolved.public and not release.draft)


async def gitea_repo(request: web.Request) -> web.Response:
    resolved, repo = await _repository(request)
    data = gitea.repository(request.app[SETTINGS].app_url, resolved.ref, repo)
    return json_answer(request, data, resolved.public)


# --- GitHub: /api/v3/repos/{owner}/{repo}... ------------------------------------------------


async def github_list(request: web.Request) -> web.Response:
    """`per_page` (at most 100, as GitHub) and `page`; prereleases always included."""
    query = request.query
    ours = {
        "page": query.get("page", ""),
        "limit": query.get("per_page", ""),
        "prereleases": "true",
        "drafts": "true",
    }
    return await _listed(request, github.release, mapping.GITHUB_ROOT, ours, "per_page")


github_latest = _in_shape(_latest, github.release)
github_by_tag = _in_shape(_by_tag, github.release)
github_by_id = _in_shape(_by_id, github.release)
github_assets = _in_shape(_assets, github.release)


async def asset_release(request: web.Request, resolved: Resolved) -> tuple[Release, int]:
    """The release holding `{asset_id}` of the path, and that id (drafts as on the read side)."""
    asset_id = positive_int64(request.match_info["asset_id"])
    release = None
    if asset_id is not None:
        release = await queries.release_by_asset(
            request.app[DB_POOL], resolved.ref.repo_id, asset_id
        )
    if asset_id is None or release is None or (release.draft and resolved.access < DRAFT_READERS):
        raise AssetNotFound()
    return release, asset_id


async def github_asset(request: web.Request) -> web.StreamResponse:
    """The asset's JSON, or its bytes for `Accept: application/octet-stream` (served by the
    download route's own function: ranges, ETag, counting)."""
    resolved = await resolve(request)
    release, asset_id = await asset_release(request, resolved)
    stored = next(a for a in release.assets if a.id == asset_id)
    public = resolved.public and not release.draft
    if "application/octet-stream" in request.headers.get("Accept", ""):
        return await serve_asset(request, resolved.ref, release, stored.name, public)
    data = _shaped(request, github.release, resolved.ref, release)["assets"]
    return json_answer(request, next(a for a in data if a["id"] == asset_id), public)


async def github_repo(request: web.Request) -> web.Response:
    resolved, repo = await _repository(request)
    data = github.repository(request.app[SETTINGS].app_url, resolved.ref, repo)
    return json_answer(request, data, resolved.public)
