"""Squirrel.Mac (Electron's autoUpdater on macOS) through update.electronjs.org's URL shape,
`/{owner}/{repo}/darwin-{arch}/{version}`: what update-electron-app builds from its `host`.
The path is the key as written: a repeated check is answered before any parsing."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from forge_common.conditional import etag_of
from forge_common.openapi import error, json_content, path_param
from forge_common.render import dumps
from forge_common.versions import parse_version

from ..errors import InvalidVersion
from ..openapi.parts import ACCESS_ERRORS, FEED_ARCH, NOT_MODIFIED, TIME, operation
from ..read.cache import NO_UPDATE, Answer, RepoReleases
from ..read.update import STABLE
from ..safety.decide import view_for
from . import squirrel
from .channels import fully_rolled_out, newest_first
from .feed import Counted, Feed, Link, Updater
from .serving import arch_of, nowhere, routed_key, serve


def mac_answer(releases: RepoReleases, raw_version: str, arch: str, link: Link) -> Answer:
    """Squirrel.Mac's answer for a client running `raw_version` on `arch`."""
    current = parse_version(raw_version)
    if current is None:
        raise InvalidVersion(raw_version)
    candidates = fully_rolled_out(newest_first(releases, STABLE))
    # Squirrel.Mac installs whatever it is given: it rolls back (docs/release-safety.md)
    view = view_for(candidates, current, releases.withdrawn, can_go_down=True)
    found = squirrel.mac_update(view.candidates, view.current, arch, link)
    if found is None:
        return NO_UPDATE
    if view.mandatory:
        found["mandatory"] = True
    body = dumps(found)
    return Answer(200, body, etag_of(body))


async def squirrel_mac(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/darwin-{arch}/{version}: Squirrel.Mac JSON (200) or 204."""
    raw_version = request.match_info["version"]
    arch = arch_of(request.match_info["arch"])

    def build(releases: RepoReleases, link: Link) -> Answer:
        return mac_answer(releases, raw_version, arch, link)

    return await serve(request, routed_key(FEED, request), build)


def _remade(releases: RepoReleases, parts: Mapping[str, str]) -> Answer:
    return mac_answer(releases, parts["version"], arch_of(parts["arch"]), nowhere)


_SQUIRREL_MAC = {
    "type": "object",
    "required": ["name", "notes", "pub_date", "url"],
    "properties": {
        "name": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
        "url": {"type": "string", "format": "uri"},
        "mandatory": {
            "type": "boolean",
            "description": "true when a critical release is above the running version (forge's "
            "own field: Squirrel.Mac ignores it; the app may read it from its own request)",
        },
    },
}

FEED = Feed(
    name="squirrel-mac",
    path="/{owner}/{repo}/darwin-{arch}/{version}",
    handler=squirrel_mac,
    key="mac {arch} {version}",
    counted=Counted(
        {"arch": "arch", "version": "running"},
        fixed={"platform": "darwin", "channel": STABLE},
        offered="name",
    ),
    remade=_remade,
    updaters=(Updater("Squirrel.Mac (Electron's autoUpdater on macOS)", (".zip",)),),
    operation=operation(
        "squirrelMacFeed",
        "Squirrel.Mac update (the update.electronjs.org URL shape)",
        [FEED_ARCH, path_param("version")],
        {
            "200": json_content("Newer release with a zip for this arch", _SQUIRREL_MAC),
            "204": {"description": "No newer release"},
            "304": NOT_MODIFIED,
            "400": error("ValInvalidInput: the version is not SemVer"),
            **ACCESS_ERRORS,
        },
        "feeds",
    ),
)
