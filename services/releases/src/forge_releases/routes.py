"""The one route table of the releases service: the read side, the OpenAPI document, downloads
and the write side, in the order the router tries them."""

from __future__ import annotations

from aiohttp import web

from .access_keys import handlers as update_keys
from .downloads import handlers as downloads
from .feeds import handlers as feeds
from .openapi import handler as openapi
from .publish import handlers as publish
from .read import handlers as read
from .read.update_check import update_check

API = "/api/v2/repos/{owner}/{repo}/releases"
KEYS = "/api/v2/repos/{owner}/{repo}/update_keys"


def add_routes(app: web.Application) -> None:
    app.router.add_routes(
        [
            # the update check first: the router tries routes in order, and it is the hot path
            web.get(f"{API}/update", update_check),
            web.get("/api/v2/openapi.json", openapi.serve),
            web.get(API, read.list_releases),
            # literal suffixes before {tag}: `update` and `latest` are not tags here
            web.get(f"{API}/latest", read.latest_release),
            web.get(f"{API}/{{tag}}", read.get_release),
            web.get("/{owner}/{repo}/releases/download/{tag}/{name}", downloads.download),
            web.get("/{owner}/{repo}/releases/latest/download/{name}", downloads.latest_download),
            # update feeds (feeds/): literal prefixes keep them off the download routes above
            web.get(f"{API}/feeds/squirrel/{{arch}}/RELEASES", feeds.squirrel_windows),
            web.get(f"{API}/feeds/electron/{{file}}", feeds.electron_yml),
            web.get(f"{API}/feeds/tauri/latest.json", feeds.tauri_static),
            web.get(
                f"{API}/feeds/tauri/{{target}}/{{arch}}/{{current_version}}", feeds.tauri_dynamic
            ),
            web.get("/{owner}/{repo}/darwin-{arch}/{version}", feeds.squirrel_mac),
            web.get("/{owner}/{repo}/win32-{arch}/{version}/RELEASES", feeds.electronjs_windows),
            # write side (publish/handlers.py)
            web.post(API, publish.create_release),
            web.patch(f"{API}/{{release_id}}", publish.update_release),
            web.delete(f"{API}/{{release_id}}", publish.delete_release),
            web.post(
                f"{API}/{{release_id}}/assets",
                publish.upload_asset,
                expect_handler=publish.defer_continue,
            ),
            web.delete(f"{API}/{{release_id}}/assets/{{asset_id}}", publish.delete_asset),
            # update keys (access_keys/handlers.py): beside releases/, never a {tag} of it
            web.post(KEYS, update_keys.create_key),
            web.get(KEYS, update_keys.list_keys),
            web.delete(f"{KEYS}/{{key_id}}", update_keys.revoke_key),
        ]
    )
