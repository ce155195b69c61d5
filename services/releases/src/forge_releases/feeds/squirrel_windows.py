"""Squirrel.Windows RELEASES (Electron's autoUpdater on Windows, electron-winstaller), by two
routes: per architecture and channel under the release API, and update.electronjs.org's
`/{owner}/{repo}/win32-{arch}/{version}/RELEASES`, what update-electron-app builds from its
`host` (stable only; the client decides from RELEASES, so the version in the path is not
needed: one answer for every version)."""

from __future__ import annotations

from aiohttp import web
from forge_common.openapi import error, path_param

from ..openapi.parts import ACCESS_ERRORS, ETAG, FEED_ARCH, FEED_CHANNEL, NOT_MODIFIED, operation
from ..read.cache import Answer, RepoReleases
from ..read.update import STABLE
from . import squirrel
from .channels import newest_first
from .feed import RELEASES_API, Counted, Feed, Link, Updater
from .serving import TEXT, Build, arch_of, channel_of, routed_key, serve, text_answer

SQUIRREL_WINDOWS = Updater(
    "Squirrel.Windows (Electron's autoUpdater on Windows, electron-winstaller)", ("-full.nupkg",)
)


def _releases_file(request: web.Request, channel: str) -> Build:
    arch = arch_of(request.match_info["arch"])

    def build(releases: RepoReleases, link: Link) -> Answer:
        text = squirrel.releases_lines(list(newest_first(releases, channel)), arch, link)
        return text_answer(text, TEXT)

    return build


async def electronjs_windows(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/win32-{arch}/{version}/RELEASES: the stable Squirrel.Windows feed."""
    return await serve(request, routed_key(ELECTRONJS, request), _releases_file(request, STABLE))


async def squirrel_windows(request: web.Request) -> web.Response:
    """GET .../releases/feeds/squirrel/{arch}/RELEASES?channel=: RELEASES of one architecture.
    Squirrel appends `id`, `localVersion` and `arch` to the query: only `channel` matters."""
    build = _releases_file(request, channel_of(request))
    return await serve(request, routed_key(FEED, request), build)


_RELEASES_TEXT = {
    "description": "Squirrel.Windows RELEASES: `SHA1 URL size` lines, ` # NN%` when staged",
    "headers": ETAG,
    "content": {"text/plain": {"schema": {"type": "string"}}},
}
_RESPONSES = {
    "200": _RELEASES_TEXT,
    "304": NOT_MODIFIED,
    "401": ACCESS_ERRORS["401"],
    "404": error("RepoNotFound, or NoReleasesFound: no full package for this architecture"),
}

FEED = Feed(
    name="squirrel-windows",
    path=f"{RELEASES_API}/feeds/squirrel/{{arch}}/RELEASES",
    handler=squirrel_windows,
    key="squirrel {arch}",
    channel=True,
    counted=Counted({"arch": "arch", "channel": "channel"}, fixed={"platform": "windows"}),
    updaters=(SQUIRREL_WINDOWS,),
    operation=operation(
        "squirrelWindowsFeed",
        "Squirrel.Windows RELEASES of one architecture",
        [FEED_ARCH, FEED_CHANNEL],
        _RESPONSES,
        "feeds",
    ),
)
# the answer is one RELEASES list for every version: kept once, so the version the client runs is
# not in the key (docs/insights.md "What is not known"), nor a channel
ELECTRONJS = Feed(
    name="electronjs-windows",
    path="/{owner}/{repo}/win32-{arch}/{version}/RELEASES",
    handler=electronjs_windows,
    key="win {arch}",
    counted=Counted({"arch": "arch"}, fixed={"platform": "windows"}),
    updaters=(SQUIRREL_WINDOWS,),
    operation=operation(
        "squirrelWindowsElectronFeed",
        "Squirrel.Windows stable RELEASES (the update.electronjs.org URL shape)",
        [FEED_ARCH, path_param("version")],
        _RESPONSES,
        "feeds",
    ),
)
