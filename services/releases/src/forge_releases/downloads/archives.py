"""The source archive addresses every release hands out (`tarball_url`, `zipball_url`: the
spec's TarURL and ZipURL, `{owner}/{repo}/archive/{tag}.tar.gz` and `.zip`).

Forge stores releases, not git repositories, so it cannot make an archive of the tagged source.
The address redirects to a source archive the release carries itself (an asset of that kind whose
name says `source` or `src`, docs/releases.md "Source archives"); otherwise it answers 404
`NoSourceArchive` saying so, never a bare not-found.
"""

from __future__ import annotations

from aiohttp import web
from forge_common.keys import DB_POOL

from ..errors import NoSourceArchive, ReleaseNotFound
from ..feeds.links import asset_url
from ..httpcache import cache_headers
from ..models import Asset, Release
from ..read import queries
from ..read.handlers import DRAFT_READERS
from ..read.params import storable_tag
from ..read.resolve import resolve

SUFFIXES = (".tar.gz", ".zip")
_SOURCE_WORDS = ("source", "src")


def source_archive(release: Release, suffix: str) -> Asset | None:
    """The asset of `release` that is its source archive of kind `suffix`, if it carries one."""
    for asset in release.assets:
        lowered = asset.name.lower()
        stem = lowered.removesuffix(suffix)
        if lowered.endswith(suffix) and any(word in stem for word in _SOURCE_WORDS):
            return asset
    return None


async def archive(request: web.Request) -> web.StreamResponse:
    """GET /{owner}/{repo}/archive/{tag}.tar.gz (or .zip): 302 to the release's own source
    archive, or 404 NoSourceArchive (ReleaseNotFound when the tag is not a readable release)."""
    file = request.match_info["file"]
    suffix = next((s for s in SUFFIXES if file.endswith(s)), None)
    resolved = await resolve(request)
    tag = file.removesuffix(suffix) if suffix else ""
    release = None
    if suffix and storable_tag(tag):
        release = await queries.release_by_download_tag(
            request.app[DB_POOL], resolved.ref.repo_id, tag
        )
    if suffix is None or release is None or (release.draft and resolved.access < DRAFT_READERS):
        raise ReleaseNotFound()
    found = source_archive(release, suffix)
    if found is None:
        raise NoSourceArchive(release.tag, suffix)
    headers = {"Location": asset_url(request, resolved.ref, release, found)}
    headers.update(cache_headers(resolved.public and not release.draft))
    return web.Response(status=302, headers=headers)
