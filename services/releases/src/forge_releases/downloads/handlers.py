"""Asset downloads at the address the API hands out (docs/releases.md Attachment.DownloadURL):

    GET /{owner}/{repo}/releases/download/{tag}/{name}
    GET /{owner}/{repo}/releases/latest/download/{name}   (latest stable release: a fixed
                                                           Squirrel.Windows feed address)

Same access rules as the API (read/resolve.py); a draft's files only for those who may read the
draft. The file itself is sent by files.py.

The files a page links to download in a browser too: a signed-in browser's session is the viewer
here as on the pages (docs/accounts.md "Sessions"), or a member could see a private release's
page and not fetch its files. Only a GET of bytes: nothing here changes state.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.accounts.sessions import attach_session, has_session_cookie
from forge_common.keys import DB_POOL

from ..errors import AssetNotFound, ReleaseNotFound
from ..models import Resolved
from ..read import queries
from ..read.handlers import DRAFT_READERS
from ..read.params import storable_tag
from ..read.resolve import resolve
from ..read.update_check import repo_releases
from .files import serve_asset


def _bad_name(name: str) -> bool:
    return not name or "/" in name or ".." in name or "\x00" in name


async def _asked(request: web.Request) -> tuple[str, Resolved]:
    """The file name asked for and its repository, for the caller (a browser's session counts
    here, as on the pages that link the file)."""
    name = request.match_info["name"]
    if _bad_name(name):
        raise AssetNotFound()
    if has_session_cookie(request):
        await attach_session(request)
    return name, await resolve(request)


async def download(request: web.Request) -> web.StreamResponse:
    name, resolved = await _asked(request)
    tag = request.match_info["tag"]
    release = None
    if storable_tag(tag):
        release = await queries.release_by_download_tag(
            request.app[DB_POOL], resolved.ref.repo_id, tag
        )
    if release is None or (release.draft and resolved.access < DRAFT_READERS):
        raise ReleaseNotFound()
    public = resolved.public and not release.draft
    return await serve_asset(request, resolved.ref, release, name, public)


async def latest_download(request: web.Request) -> web.StreamResponse:
    name, resolved = await _asked(request)
    stable = (await repo_releases(request.app, resolved.ref.repo_id)).stable
    if not stable:
        raise ReleaseNotFound()
    return await serve_asset(request, resolved.ref, stable[0], name, resolved.public)
