"""Files of a release from the console: upload (`POST .../releases/edit/{tag}/assets`, a
multipart form whose `_csrf` field comes before the file) and removal (`.../assets/delete`).

The upload is the API's own (publish/handlers.uploaded_asset): streamed in chunks to storage,
the same size limit, name checks, Tauri signature check and content-addressed storage; only the
CSRF token is read before the file, from the form's first fields. The console script posts one
file per request (with `X-Forge-Console: 1`) and reads a JSON answer; a plain form gets the edit
page again, with the error next to the file field when there is one.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.audit import origin_of
from forge_common.body import streams_body
from forge_common.csrf import CsrfRefused, check_token, checked_form, same_origin, text_field
from forge_common.errors import ApiError, AuthTokenMissing, NotFound, PermissionDenied
from forge_common.ids import positive_int64
from forge_common.pages import page, see_other
from forge_common.render import json_response

from ..errors import AssetNotFound, NoPublishAccess
from ..publish import writes
from ..publish.handlers import uploaded_asset
from .forms import NO_STORE, is_script
from .releases import edit_path, form_page, release_of, values_of

# Refusals about the caller or the repository, not the file: the page's own error answers them.
_NOT_ABOUT_THE_FILE = (CsrfRefused, AuthTokenMissing, NoPublishAccess, NotFound, PermissionDenied)


@streams_body  # the file is streamed to storage under the upload's own limits
@page
async def upload(request: web.Request) -> web.StreamResponse:
    resolved, _, release = await release_of(request)
    if not same_origin(request):
        raise CsrfRefused()

    async def check_form(fields: dict[str, str]) -> None:
        check_token(request, fields.get("_csrf"))

    try:
        _, after, asset, _ = await uploaded_asset(
            request, release_id=release.id, check_fields=check_form
        )
    except ApiError as error:
        if isinstance(error, _NOT_ABOUT_THE_FILE):
            raise
        if is_script(request):
            body = {"message": error.message, "field": "attachment"}
            return json_response(body, status=error.status, headers=NO_STORE)
        values = values_of(release)
        errors = {"attachment": error.message}
        return form_page(
            request, resolved, values, release=release, errors=errors, status=error.status
        )
    if is_script(request):
        done: dict[str, object] = {"id": asset.id, "name": asset.name, "size": asset.size}
        return json_response(done, status=201, headers=NO_STORE)
    return see_other(f"{edit_path(resolved, after.tag)}?done=uploaded")


@page
async def delete(request: web.Request) -> web.StreamResponse:
    resolved, viewer, release = await release_of(request)
    form = await checked_form(request)
    asset_id = positive_int64(text_field(form, "asset_id"))
    if asset_id is None:
        raise AssetNotFound()
    await writes.delete_asset(
        request.app,
        resolved.ref,
        viewer.id,
        release.id,
        asset_id,
        origin=origin_of(request, "console"),
    )
    return see_other(f"{edit_path(resolved, release.tag)}?done=deleted")
