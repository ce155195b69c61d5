"""Tauri v2's updater: the dynamic endpoint (`{target}/{arch}/{current_version}`) and the static
`latest.json` with `platforms`. Their signatures are read from the storage (signatures.py), so
their bodies are not made again for counting behind nginx (docs/insights.md "In Kubernetes")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from forge_common.conditional import etag_of
from forge_common.openapi import error, json_content, path_param
from forge_common.render import dumps
from forge_common.versions import parse_version

from ..errors import InvalidVersion, NoReleasesFound
from ..models import Asset
from ..openapi.parts import ACCESS_ERRORS, FEED_CHANNEL, NOT_MODIFIED, TIME, operation
from ..read.cache import NO_UPDATE, Answer, RepoReleases
from ..safety.decide import view_for
from . import tauri
from .channels import fully_rolled_out, newest_first
from .feed import RELEASES_API, Counted, Feed, Link, Updater
from .serving import channel_of, routed_key, serve
from .signatures import signature_text

TAURI = Updater("Tauri's updater (signed bundles)", (".sig",))


def _sign(request: web.Request) -> Callable[[Asset], Awaitable[str | None]]:
    async def sign(sig: Asset) -> str | None:
        return await signature_text(request.app, sig)

    return sign


async def tauri_dynamic(request: web.Request) -> web.Response:
    """GET .../releases/feeds/tauri/{target}/{arch}/{current_version}?channel=: Tauri's dynamic
    answer (200) or 204."""
    match = request.match_info
    target, arch, raw_version = match["target"], match["arch"], match["current_version"]
    if target not in tauri.TARGETS:
        raise NoReleasesFound()
    channel = channel_of(request)

    async def build(releases: RepoReleases, link: Link) -> Answer:
        current = parse_version(raw_version)
        if current is None:
            raise InvalidVersion(raw_version)
        candidates = fully_rolled_out(newest_first(releases, channel))
        # offered lower only on a withdrawn version: the app's version_comparator decides
        view = view_for(candidates, current, releases.withdrawn, can_go_down=True)
        found = await tauri.dynamic(
            view.candidates, view.current, target, arch, link, _sign(request)
        )
        if found is None:
            return NO_UPDATE
        if view.mandatory:
            found["mandatory"] = True
        body = dumps(found)
        return Answer(200, body, etag_of(body))

    return await serve(request, routed_key(DYNAMIC, request), build)


async def tauri_static(request: web.Request) -> web.Response:
    """GET .../releases/feeds/tauri/latest.json?channel=: the static form with `platforms`."""
    channel = channel_of(request)

    async def build(releases: RepoReleases, link: Link) -> Answer:
        candidates = fully_rolled_out(newest_first(releases, channel))
        found = await tauri.static(candidates, link, _sign(request))
        if found is None:
            raise NoReleasesFound()
        body = dumps(found)
        return Answer(200, body, etag_of(body))

    return await serve(request, routed_key(STATIC, request), build)


_TAURI = {
    "type": "object",
    "required": ["version", "url", "signature", "notes", "pub_date"],
    "properties": {
        "version": {"type": "string"},
        "url": {"type": "string", "format": "uri"},
        "signature": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
        "mandatory": {
            "type": "boolean",
            "description": "true when a critical release is above the running version (forge's "
            "own field, in the plugin's `raw_json`)",
        },
    },
    "not": {"required": ["name"]},
}
_TAURI_STATIC = {
    "type": "object",
    "required": ["version", "notes", "pub_date", "platforms"],
    "properties": {
        "version": {"type": "string"},
        "notes": {"type": "string"},
        "pub_date": TIME,
        "platforms": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["signature", "url"],
                "properties": {"signature": {"type": "string"}, "url": {"type": "string"}},
            },
        },
    },
}

STATIC = Feed(
    name="tauri",
    path=f"{RELEASES_API}/feeds/tauri/latest.json",
    handler=tauri_static,
    key="tauri-json",
    channel=True,
    counted=Counted({"channel": "channel"}, offered="version"),
    updaters=(TAURI,),
    operation=operation(
        "tauriStaticFeed",
        "Tauri v2 static latest.json",
        [FEED_CHANNEL],
        {
            "200": json_content("The newest release with signed bundles", _TAURI_STATIC),
            "304": NOT_MODIFIED,
            "401": ACCESS_ERRORS["401"],
            "404": error("RepoNotFound, or NoReleasesFound: no signed bundle"),
        },
        "feeds",
    ),
)
DYNAMIC = Feed(
    name="tauri",
    path=f"{RELEASES_API}/feeds/tauri/{{target}}/{{arch}}/{{current_version}}",
    handler=tauri_dynamic,
    key="tauri {target} {arch} {current_version}",
    channel=True,
    counted=Counted(
        {
            "target": "platform",
            "arch": "arch",
            "current_version": "running",
            "channel": "channel",
        },
        offered="version",
    ),
    updaters=(TAURI,),
    operation=operation(
        "tauriFeed",
        "Tauri v2 dynamic update endpoint",
        [
            path_param("target", {"type": "string", "enum": ["darwin", "linux", "windows"]}),
            path_param("arch", description="x86_64, aarch64, i686, armv7"),
            path_param("current_version"),
            FEED_CHANNEL,
        ],
        {
            "200": json_content("Newer release with a signed bundle", _TAURI),
            "204": {"description": "No newer release with a signed bundle"},
            "304": NOT_MODIFIED,
            "400": error("ValInvalidInput: the version is not SemVer"),
            **ACCESS_ERRORS,
        },
        "feeds",
    ),
)
