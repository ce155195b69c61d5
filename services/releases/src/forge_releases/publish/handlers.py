"""Handlers of the publishing API (version 2, write side): parse, call writes.py, render.

    POST   /api/v2/repos/{owner}/{repo}/releases                          201 release
    PATCH  .../releases/{release_id}                                      200 release
    DELETE .../releases/{release_id}                                      204 (repository admin)
    POST   .../releases/{release_id}/assets?name=FILE  (raw or multipart) 201 attachment
    DELETE .../releases/{release_id}/assets/{asset_id}                    204

Access: the repository is resolved as on the read side (read/resolve.py), so whoever cannot read a
private repository gets 404 and learns nothing; then anonymous callers get 401
AuthTokenMissing, and signed-in callers without write access (admin for deleting a release) 403.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from aiohttp import HttpVersion11, web
from aiohttp.http_exceptions import BadHttpMessage
from forge_common.access import Access
from forge_common.audit import origin_of
from forge_common.auth import Viewer, viewer_of
from forge_common.body import read_json_object, streams_body
from forge_common.errors import AuthTokenMissing
from forge_common.ids import positive_int64
from forge_common.keys import DB_POOL, SETTINGS
from forge_common.outage import is_database_down
from forge_common.render import json_response

from ..errors import (
    AssetNameTaken,
    AssetNotFound,
    MalformedBody,
    NoPublishAccess,
    ReleaseNotFound,
    StorageFailed,
)
from ..feeds import velopack
from ..keys import DOWNLOAD_COUNTER, STORAGE
from ..linux import repository as linux_repository
from ..models import Asset, Release, RepoRef
from ..read import render
from ..read.queries import release_by_id
from ..read.resolve import resolve
from ..storage import Blob
from ..storage.base import StorageUnavailable
from ..urls import api_releases_url
from . import writes
from .input import asset_name, new_release
from .uploads import FieldCheck, check_declared_length, content_type_of, open_upload, receive

log = logging.getLogger(__name__)

_NO_STORE = {"Cache-Control": "no-store"}


async def publisher(request: web.Request, need: Access = Access.WRITE) -> tuple[RepoRef, Viewer]:
    resolved = await resolve(request)  # 404 / AuthTokenMissing as on the read side
    viewer = viewer_of(request)
    if viewer is None:
        raise AuthTokenMissing()
    if resolved.access < need:
        raise NoPublishAccess(need)
    return resolved.ref, viewer


def release_id_of(request: web.Request) -> int:
    release_id = positive_int64(request.match_info["release_id"])
    if release_id is None:
        raise ReleaseNotFound()
    return release_id


def _asset_id(request: web.Request) -> int:
    asset_id = positive_int64(request.match_info["asset_id"])
    if asset_id is None:
        raise AssetNotFound()
    return asset_id


def _release_response(
    request: web.Request, ref: RepoRef, release: Release, status: int = 200
) -> web.Response:
    app_url = request.app[SETTINGS].app_url
    data = render.release(app_url, ref, release, request.app[DOWNLOAD_COUNTER])
    headers = dict(_NO_STORE)
    if status == 201:
        base = api_releases_url(app_url, ref.owner, ref.name)
        headers["Location"] = f"{base}/{release.id}"
    return json_response(data, status=status, headers=headers)


async def created_release(request: web.Request) -> tuple[RepoRef, Release]:
    """The release a POST body creates (also the compat APIs', whose bodies are the same)."""
    ref, viewer = await publisher(request)
    fields = new_release(await read_json_object(request))
    origin = origin_of(request)
    return ref, await writes.create_release(request.app, ref, viewer.id, fields, origin=origin)


async def updated_release(request: web.Request) -> tuple[RepoRef, Release]:
    """The release of `{release_id}` after a PATCH body (also the compat APIs')."""
    ref, viewer = await publisher(request)
    release_id = release_id_of(request)
    data = await read_json_object(request)
    origin = origin_of(request)
    return ref, await writes.update_release(
        request.app, ref, viewer.id, release_id, data, origin=origin
    )


async def create_release(request: web.Request) -> web.Response:
    ref, release = await created_release(request)
    return _release_response(request, ref, release, 201)


async def update_release(request: web.Request) -> web.Response:
    ref, release = await updated_release(request)
    return _release_response(request, ref, release)


async def delete_release(request: web.Request) -> web.Response:
    ref, viewer = await publisher(request, Access.ADMIN)
    await writes.delete_release(
        request.app, ref, viewer.id, release_id_of(request), origin=origin_of(request)
    )
    return web.Response(status=204)


async def defer_continue(request: web.Request) -> None:
    """Expect handler of the upload route. aiohttp's default answers `100 Continue` before any
    check; here `upload_asset` sends it once the checks that need no body have passed, so a
    refused upload (bad token, no access, over the limit, name taken) is never transmitted."""
    if request.headers.get("Expect", "").lower() != "100-continue":
        raise web.HTTPExpectationFailed(text="Only Expect: 100-continue is supported")


async def _send_continue(request: web.Request) -> None:
    if request.version == HttpVersion11 and request.headers.get("Expect"):
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # as aiohttp's own expect handler: not the response


def _check_name_free(release: Release, name: str) -> None:
    if any(asset.name == name for asset in release.assets):
        raise AssetNameTaken(name)


def _stored_name(sent: str | None, rename: Callable[[str], str]) -> str:
    return asset_name(rename(asset_name(sent)))


def _same(name: str) -> str:
    return name


async def uploaded_asset(
    request: web.Request,
    rename: Callable[[str], str] = _same,
    release_id: int | None = None,
    check_fields: FieldCheck | None = None,
) -> tuple[RepoRef, Release, Asset, Blob]:
    """Receive the asset of an upload request (also the compat APIs' and the console's, which
    name the release themselves and check the form's fields before the file): the file is
    checked (name, duplicate, declared size) before a byte of it is read. The caller is
    `@streams_body`. `rename` turns the name sent into the name stored (GitHub's renaming on
    `/api/v3`)."""
    ref, viewer = await publisher(request)
    if release_id is None:
        release_id = release_id_of(request)
    limit = request.app[SETTINGS].max_upload_bytes
    check_declared_length(request, limit)
    release = await release_by_id(request.app[DB_POOL], ref.repo_id, release_id)
    if release is None:
        raise ReleaseNotFound()
    await writes.check_writable(request.app, ref)  # before streaming, not only after
    if "name" in request.query:  # a multipart file name is known only after `100 Continue`
        _check_name_free(release, _stored_name(request.query["name"], rename))
    await _send_continue(request)
    try:
        upload = await open_upload(request, check_fields)
        name = _stored_name(request.query.get("name", upload.filename), rename)
        _check_name_free(release, name)
        writer = await receive(upload, request.app[STORAGE], limit)
        release, asset, blob = await writes.attach_asset(
            request.app,
            ref,
            viewer.id,
            release.id,
            name,
            content_type_of(upload.declared_type, name),
            writer,
            origin=origin_of(request),
        )
    except BadHttpMessage:
        raise MalformedBody() from None
    except ConnectionResetError as exc:
        if is_database_down(exc):
            raise  # the middleware's 503
        # The client went away mid-upload: an ordinary event, not an error of ours. receive()
        # has deleted what arrived; nothing is stored. Cancelled, as aiohttp does when it sees
        # the disconnection first (downloads do the same): nobody is left to answer.
        log.info(
            "upload to %s/%s release %s cut short: the client went away; nothing stored",
            ref.owner,
            ref.name,
            release.id,
        )
        raise asyncio.CancelledError() from None
    except OSError:
        log.exception("storing an upload for %s/%s failed", ref.owner, ref.name)
        raise StorageFailed() from None
    await read_package_at_upload(request.app, asset)
    return ref, release, asset, blob


async def read_package_at_upload(app: web.Application, asset: Asset) -> None:
    """A `.deb`, `.rpm` or Velopack `.nupkg` is read now, from its own bytes, and what it says
    kept for the Linux repositories (linux/repository.py) or the Velopack feed; if the storage
    cannot be read back right now, the first request that needs it reads it instead."""
    try:
        await linux_repository.read_at_upload(app, asset)
        await velopack.read_at_upload(app, asset)
    except StorageUnavailable:
        log.warning("the package %s is read later: the storage is unavailable", asset.id)


@streams_body  # its own limits: MAX_UPLOAD_BYTES and an idle timeout between chunks
async def upload_asset(request: web.Request) -> web.Response:
    ref, release, asset, blob = await uploaded_asset(request)
    app_url = request.app[SETTINGS].app_url
    data = render.attachment(app_url, ref, release.tag, asset, request.app[DOWNLOAD_COUNTER])
    # beyond the read side's attachment: the digest, so a publisher can skip identical files
    data["sha256"] = blob.sha256
    return json_response(data, status=201, headers=_NO_STORE)


async def delete_asset(request: web.Request) -> web.Response:
    ref, viewer = await publisher(request)
    release_id, asset_id = release_id_of(request), _asset_id(request)
    await writes.delete_asset(
        request.app, ref, viewer.id, release_id, asset_id, origin=origin_of(request)
    )
    return web.Response(status=204)
