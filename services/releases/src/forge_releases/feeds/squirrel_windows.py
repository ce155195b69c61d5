"""Squirrel.Windows RELEASES (Electron's autoUpdater on Windows, electron-winstaller), by two
routes: per architecture and channel under the release API, and update.electronjs.org's
`/{owner}/{repo}/win32-{arch}/{version}/RELEASES`, what update-electron-app builds from its
`host` (stable only).

The client decides from RELEASES, so one answer serves every version, except below a required
release: the running version the client tells (Squirrel appends `?id=&localVersion=&arch=` to
the feed's URL; update-electron-app's path holds it too) picks the band of its answer, and an
install below a required release is given RELEASES topped by that release (steps.py)."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from forge_common.asset_match import WINDOWS, best
from forge_common.openapi import error, path_param, query_param

from ..openapi.parts import ACCESS_ERRORS, ETAG, FEED_ARCH, FEED_CHANNEL, NOT_MODIFIED, operation
from ..read.cache import Answer, RepoReleases
from ..read.update import STABLE
from . import squirrel
from .channels import newest_first
from .feed import RELEASES_API, Counted, Feed, Link, QueryPart, Stepped, Updater
from .serving import TEXT, arch_of, channel_of, serve, text_answer
from .steps import Steps, required_versions, running_word, step_of_key, unsaid, up_to

SQUIRREL_WINDOWS = Updater(
    "Squirrel.Windows (Electron's autoUpdater on Windows, electron-winstaller)", ("-full.nupkg",)
)


def _steps(releases: RepoReleases, parts: Mapping[str, str]) -> Steps:
    """The required releases of the channel with a full package for the arch: a required release
    without one is no step here (its installs could never reach it)."""
    arch = arch_of(parts["arch"])
    found = newest_first(releases, parts.get("channel", STABLE))
    return required_versions(
        (version, release)
        for version, release in found
        if best(release.assets, WINDOWS, arch, squirrel.FULL) is not None
    )


async def _serve(
    request: web.Request, feed: Feed, channel: str, match: Mapping[str, str]
) -> web.Response:
    """RELEASES of the request's arch and channel, for the running version its key ends with."""
    arch = arch_of(match["arch"])
    key = feed.key_of(match, request.query)

    async def kept_as(releases: RepoReleases, key: str) -> str:
        return feed.kept_key(releases, key) or key

    def build(releases: RepoReleases, link: Link) -> Answer:
        step = step_of_key(feed.kept_key(releases, key) or key)
        found = up_to(newest_first(releases, channel), step)
        return text_answer(squirrel.releases_lines(found, arch, link), TEXT)

    return await serve(request, key, build, kept_as)


async def electronjs_windows(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/win32-{arch}/{version}/RELEASES: the stable Squirrel.Windows feed."""
    match = {**request.match_info, "version": running_word(request.match_info["version"])}
    return await _serve(request, ELECTRONJS, STABLE, match)


async def squirrel_windows(request: web.Request) -> web.Response:
    """GET .../releases/feeds/squirrel/{arch}/RELEASES?channel=: RELEASES of one architecture.
    Squirrel appends `id`, `localVersion` and `arch` to the query: `channel` and `localVersion`
    matter."""
    return await _serve(request, FEED, channel_of(request), request.match_info)


def _local_version(query: Mapping[str, str]) -> str:
    return running_word(query.get("localVersion", ""))


_LOCAL_VERSION = query_param(
    "localVersion",
    {"type": "string"},
    "the running version, which Squirrel.Windows appends (with `id` and `arch`): an install below "
    "a required release is given RELEASES topped by that release",
)
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
    counted=Counted(
        {"arch": "arch", "channel": "channel", "running": unsaid}, fixed={"platform": "windows"}
    ),
    updaters=(SQUIRREL_WINDOWS,),
    query_parts=(QueryPart("running", _local_version),),
    stepped=Stepped(_steps),
    operation=operation(
        "squirrelWindowsFeed",
        "Squirrel.Windows RELEASES of one architecture",
        [FEED_ARCH, FEED_CHANNEL, _LOCAL_VERSION],
        _RESPONSES,
        "feeds",
    ),
)
# the answer is one RELEASES list per band of running versions (steps.py), stable only; insights
# does not count the running version (docs/insights.md "What is not known")
ELECTRONJS = Feed(
    name="electronjs-windows",
    path="/{owner}/{repo}/win32-{arch}/{version}/RELEASES",
    handler=electronjs_windows,
    key="win {arch} {version}",
    counted=Counted({"arch": "arch", "version": unsaid}, fixed={"platform": "windows"}),
    updaters=(SQUIRREL_WINDOWS,),
    stepped=Stepped(_steps),
    operation=operation(
        "squirrelWindowsElectronFeed",
        "Squirrel.Windows stable RELEASES (the update.electronjs.org URL shape)",
        [FEED_ARCH, path_param("version")],
        _RESPONSES,
        "feeds",
    ),
)
