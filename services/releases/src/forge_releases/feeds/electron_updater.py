"""electron-updater's yml files (`latest.yml`, `latest-mac.yml`, `beta-linux.yml`…) and the
files a yml names relative to the feed (named_files.py)."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web
from forge_common.asset_match import YmlFile, parse_file_name
from forge_common.conditional import etag_of
from forge_common.openapi import error, path_param
from forge_common.render import dumps

from ..errors import NoReleasesFound
from ..openapi.parts import ACCESS_ERRORS, ETAG, NOT_MODIFIED, operation
from ..read.cache import Answer, RepoReleases
from . import electron
from .channels import newest_first, staged
from .feed import RELEASES_API, Counted, Feed, Link, Updater
from .named_files import find_named
from .serving import YAML, Build, nowhere, routed_key, serve


def yml_answer(releases: RepoReleases, name: str, wanted: YmlFile, link: Link) -> Answer | str:
    """electron-updater's `name` (its facts `wanted`): the yml, or the URL of the release's own."""
    for version, release in newest_first(releases, wanted.channel):
        uploaded = next((a for a in release.assets if a.name.lower() == name.lower()), None)
        if uploaded is not None:
            return link(release, uploaded)
        files = electron.files_of(release, wanted)
        if files:
            info = electron.update_info(version, release, files, link, staged(release))
            body = dumps(info)
            return Answer(200, body, etag_of(body), YAML)
    raise NoReleasesFound()


async def electron_yml(request: web.Request) -> web.Response:
    """GET .../releases/feeds/electron/{file}: the yml from the newest release of the channel
    with files for it; a release that carries the file itself is answered with a redirect to it
    (served as uploaded). Any other name is a file a yml named relative to the feed: a redirect
    to its download, kept under its own key (never counted as a yml)."""
    name = request.match_info["file"]
    wanted = parse_file_name(name)
    if wanted is None:
        return await serve(request, f"feed file {name}", _named_file(name))

    def build(releases: RepoReleases, link: Link) -> Answer | str:
        return yml_answer(releases, name, wanted, link)

    return await serve(request, routed_key(FEED, request), build)


def _named_file(name: str) -> Build:
    def build(releases: RepoReleases, link: Link) -> str:
        found = find_named(releases, name)
        if found is None:
            raise NoReleasesFound()
        return link(*found)

    return build


def _remade(releases: RepoReleases, parts: Mapping[str, str]) -> Answer | str:
    wanted = parse_file_name(parts["file"])
    if wanted is None:
        raise NoReleasesFound()
    return yml_answer(releases, parts["file"], wanted, nowhere)


def _file_says(name: str) -> Mapping[str, str]:
    """What a yml's name says: its platform, architecture ('' for macOS) and channel."""
    wanted = parse_file_name(name)
    if wanted is None:
        return {}
    return {"platform": wanted.platform, "arch": wanted.arch, "channel": wanted.channel}


FEED = Feed(
    name="electron-updater",
    path=f"{RELEASES_API}/feeds/electron/{{file}}",
    handler=electron_yml,
    key="yml {file}",
    counted=Counted({"file": _file_says}, offered="version"),
    remade=_remade,
    updaters=(
        Updater("electron-updater (Windows installers)", (".exe",)),
        Updater("electron-updater (macOS)", (".zip", ".dmg")),
        Updater("electron-updater (Linux AppImage)", (".AppImage",)),
    ),
    operation=operation(
        "electronUpdaterFile",
        "electron-updater's {channel}.yml, {channel}-mac.yml, {channel}-linux[-arch].yml, "
        "and any file a yml names relative to the feed",
        [
            path_param(
                "file",
                {"type": "string"},
                "a yml's name, or a file name an uploaded yml hands out (found with "
                "dashes or dots where the stored name has spaces)",
            )
        ],
        {
            "200": {
                "description": "electron-builder update info (JSON, which is YAML)",
                "headers": ETAG,
                "content": {"text/yaml": {"schema": {"type": "object"}}},
            },
            "302": {
                "description": "The release carries this file (the yml itself, or a "
                "file it names): its download URL, signed with `?key=`"
            },
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or NoReleasesFound: no release has such files"),
        },
        "feeds",
    ),
)
