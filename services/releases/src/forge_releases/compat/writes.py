"""Write handlers of both compat shapes: the version-2 publishing side (publish/handlers.py and
writes.py, same bodies, checks and events), answered in Gitea's or GitHub's shape.

    Gitea  POST   /api/v1/repos/{o}/{r}/releases                     201 Release
           PATCH  .../releases/{id}                                  200 Release
           DELETE .../releases/{id}                                  204
           POST   .../releases/{id}/assets?name=  (multipart `attachment`)  201 Attachment
           DELETE .../releases/{id}/assets/{asset_id}                204
    GitHub POST   /api/v3/repos/{o}/{r}/releases                     201 release
           PATCH  .../releases/{id}                                  200 release
           DELETE .../releases/{id}                                  204
           POST   .../releases/{id}/assets?name=&label=  (raw body: the release's upload_url)
                                                                     201 release asset
           DELETE .../releases/assets/{asset_id}                     204
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from forge_common.asset_names import github_name
from forge_common.audit import origin_of
from forge_common.body import streams_body
from forge_common.keys import SETTINGS
from forge_common.render import json_response

from ..errors import AssetNameTaken
from ..keys import DOWNLOAD_COUNTER
from ..models import Release, RepoRef
from ..publish import handlers as publish
from ..publish import writes
from ..read import render
from ..read.resolve import resolve
from . import gitea, github
from .handlers import Shape, asset_release

_NO_STORE = {"Cache-Control": "no-store"}
# GitHub's answer to an upload whose (renamed) name the release already has: electron-builder's
# GitHubPublisher reads `errors[0].code` on a 422 to delete the old asset and upload again, and
# Forge's publisher reads it to explain the failure (docs/compat.md "Asset names").
GITHUB_ALREADY_EXISTS = {
    "message": "Validation Failed",
    "errors": [{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}],
    "documentation_url": "https://docs.github.com/rest/releases/assets#upload-a-release-asset",
    "status": "422",
}


def _release(
    request: web.Request, shape: Shape, ref: RepoRef, release: Release, status: int
) -> web.Response:
    app_url = request.app[SETTINGS].app_url
    data = shape(app_url, ref, release, request.app[DOWNLOAD_COUNTER], render.unchanged)
    headers = dict(_NO_STORE)
    if status == 201:
        headers["Location"] = data["url"]
    return json_response(data, status=status, headers=headers)


def _answering(
    write: Callable[[web.Request], Awaitable[tuple[RepoRef, Release]]], shape: Shape, status: int
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler running the publishing side's `write`, answering in `shape`."""

    async def handler(request: web.Request) -> web.Response:
        ref, release = await write(request)
        return _release(request, shape, ref, release, status)

    return handler


gitea_create = _answering(publish.created_release, gitea.release, 201)
github_create = _answering(publish.created_release, github.release, 201)
gitea_edit = _answering(publish.updated_release, gitea.release, 200)
github_edit = _answering(publish.updated_release, github.release, 200)


@streams_body
async def gitea_upload(request: web.Request) -> web.Response:
    ref, release, asset, _ = await publish.uploaded_asset(request)
    app_url = request.app[SETTINGS].app_url
    data = render.attachment(app_url, ref, release.tag, asset, request.app[DOWNLOAD_COUNTER])
    return json_response(data, status=201, headers=_NO_STORE)


@streams_body
async def github_upload(request: web.Request) -> web.Response:
    """Stores the name as GitHub would (`App 1.0.exe` as `App.1.0.exe`); a name taken is GitHub's
    422 `already_exists`, not our 409."""
    try:
        ref, release, asset, _ = await publish.uploaded_asset(request, github_name)
    except AssetNameTaken:
        return json_response(GITHUB_ALREADY_EXISTS, status=422, headers=_NO_STORE)
    app_url = request.app[SETTINGS].app_url
    common = render.attachment(app_url, ref, release.tag, asset, request.app[DOWNLOAD_COUNTER])
    shaped = github.asset(github.assets_api_url(app_url, ref), common, asset)
    return json_response(shaped, status=201, headers=_NO_STORE)


async def github_delete_asset(request: web.Request) -> web.Response:
    """GitHub names the asset alone: its release is looked up first (404 as on the read side)."""
    ref, viewer = await publish.publisher(request)
    release, asset_id = await asset_release(request, await resolve(request))
    await writes.delete_asset(
        request.app, ref, viewer.id, release.id, asset_id, origin=origin_of(request)
    )
    return web.Response(status=204)
