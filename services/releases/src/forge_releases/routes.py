"""The one route table of the releases service: the read side, the OpenAPI document, downloads
and the write side, in the order the router tries them."""

from __future__ import annotations

from aiohttp import web

from .access_keys import handlers as update_keys
from .downloads import handlers as downloads
from .openapi import handler as openapi
from .pages import handlers as pages
from .publish import handlers as publish
from .read import handlers as read
from .read.update_check import update_check

API = "/api/v2/repos/{owner}/{repo}/releases"
# Pages (docs/pages.md) live at `/{owner}/{repo}...`: an owner is never a top-level route's name.
OWNER = r"(?!(?:api|avatars|healthz|readyz|metrics|internal)/)[A-Za-z0-9][A-Za-z0-9._-]{0,38}"
PAGE = f"/{{owner:{OWNER}}}/{{repo}}"
# The page routes (not in the OpenAPI document, which describes the API); the download page
# first: it is the one visited most, and the router tries routes in order.
PAGE_PATHS = (f"{PAGE}/download", PAGE, f"{PAGE}/releases", f"{PAGE}/releases/tag/{{tag}}")
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
    # Pages last: literal suffixes only, so feeds and other `/{owner}/{repo}/...` routes stay free.
    app.router.add_routes(
        [
            web.get(path, handler)
            for path, handler in zip(
                PAGE_PATHS,
                (pages.download_page, pages.repo_page, pages.releases_page, pages.release_page),
                strict=True,
            )
        ]
    )
