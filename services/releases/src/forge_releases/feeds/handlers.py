"""Handlers of the update feeds: the repository and its releases come from the cache the update
check uses (read/update_check.py, invalidated on publish through the change notifications), and a
feed's answer is prepared once down to its bytes and kept with them, like the check's. A kept
answer is given before routing like the check's (`fast_key`, registered in routes.py), under
the key each route's `*_key` function makes from the path and query.

Each route: the update.electronjs.org shape (`/{owner}/{repo}/darwin-{arch}/{version}` and
`/{owner}/{repo}/win32-{arch}/{version}/RELEASES`, what update-electron-app builds from its
`host`), Squirrel.Windows RELEASES per architecture, and electron-updater's yml files.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web
from forge_common.asset_match import YmlFile, canonical_arch, parse_file_name
from forge_common.conditional import etag_of
from forge_common.render import dumps
from forge_common.versions import parse_version

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import signed
from ..errors import InvalidVersion, NoReleasesFound
from ..httpcache import cache_headers
from ..keys import INSIGHTS, RELEASE_CACHE
from ..models import Asset, Release
from ..read.cache import NO_UPDATE, Answer, RepoReleases
from ..read.resolve import resolve
from ..read.update import STABLE
from ..read.update_check import repo_releases
from . import electron, squirrel, tauri
from .channels import fully_rolled_out, newest_first, staged
from .links import asset_url
from .named_files import find_named
from .signatures import signature_text

TEXT = "text/plain; charset=utf-8"
YAML = "text/yaml; charset=utf-8"

Built = Answer | str
Build = Callable[[RepoReleases, Callable[[Release, Asset], str]], Built | Awaitable[Built]]
# (the route's variable parts, the request) -> what the answer depends on besides the repository
FeedKey = Callable[[Mapping[str, str], web.BaseRequest], str]


def _cache_key(key: str) -> str:
    return f"feed {key}"  # a space never occurs in the raw query strings the check keys by


def fast_key(key_of: FeedKey) -> Callable[[web.BaseRequest, Mapping[str, str]], str | None]:
    """A feed route's key before routing (forge_common.fast_path, routes.py), or None for a
    request naming an update key: its answer holds URLs signed for that caller, never shared."""

    def key(request: web.BaseRequest, match: Mapping[str, str]) -> str | None:
        if request.rel_url.raw_query_string and names_key(request):
            return None
        return _cache_key(key_of(match, request))

    return key


async def _serve(request: web.Request, key_of: FeedKey, build: Build) -> web.Response:
    """The prepared answer under the route's key, or `build` it; a str from `build` is a URL to
    redirect to (an uploaded file, served as is)."""
    cache_key = _cache_key(key_of(request.match_info, request))
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    keyed = signed(request)
    cache = request.app[RELEASE_CACHE]
    answer = None if keyed else cache.kept(releases, cache_key)
    if answer is None:
        ref = resolved.ref

        def link(release: Release, asset: Asset) -> str:
            return asset_url(request, ref, release, asset)

        outcome = build(releases, link)
        built = await outcome if inspect.isawaitable(outcome) else outcome
        if isinstance(built, str):
            request.app[INSIGHTS].answered(resolved.ref.repo_id, cache_key, b"")
            return web.Response(
                status=302, headers={"Location": built, **cache_headers(resolved.public)}
            )
        answer = built
        if not keyed:
            cache.remember_answer(releases, cache_key, answer)
    request.app[INSIGHTS].answered(resolved.ref.repo_id, cache_key, answer.body)
    return answer.respond(request, resolved.public)


def _arch(request: web.Request) -> str:
    raw = request.match_info["arch"]
    return canonical_arch(raw) or raw.lower()


def _text(text: str | None, content_type: str) -> Answer:
    if text is None:
        raise NoReleasesFound()
    body = text.encode()
    return Answer(200, body, etag_of(body), content_type)


def _channel(request: web.BaseRequest) -> str:
    return request.query.get("channel") or STABLE


def _key(template: str, *, channel: bool = False) -> FeedKey:
    """A route's key: `template` filled from the path's variable parts, then the channel."""
    if not channel:
        return lambda match, request: template.format_map(match)
    return lambda match, request: f"{template.format_map(match)} {_channel(request)}"


# What each feed's answer depends on besides the repository. The update.electronjs.org shape is
# keyed by the path as written: a repeated check is answered before any parsing.
mac_key = _key("mac {arch} {version}")
electronjs_windows_key = _key("win {arch}")
squirrel_key = _key("squirrel {arch}", channel=True)
yml_key = _key("yml {file}")
tauri_key = _key("tauri {target} {arch} {current_version}", channel=True)
tauri_json_key = _key("tauri-json", channel=True)


def mac_answer(
    releases: RepoReleases, raw_version: str, arch: str, link: Callable[[Release, Asset], str]
) -> Answer:
    """Squirrel.Mac's answer for a client running `raw_version` on `arch`."""
    current = parse_version(raw_version)
    if current is None:
        raise InvalidVersion(raw_version)
    candidates = fully_rolled_out(newest_first(releases, STABLE))
    found = squirrel.mac_update(candidates, current, arch, link)
    if found is None:
        return NO_UPDATE
    body = dumps(found)
    return Answer(200, body, etag_of(body))


async def squirrel_mac(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/darwin-{arch}/{version}: Squirrel.Mac JSON (200) or 204."""
    raw_version = request.match_info["version"]

    def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> Answer:
        return mac_answer(releases, raw_version, _arch(request), link)

    return await _serve(request, mac_key, build)


def _windows_feed(request: web.Request, channel: str) -> Build:
    arch = _arch(request)

    def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> Answer:
        text = squirrel.releases_lines(list(newest_first(releases, channel)), arch, link)
        return _text(text, TEXT)

    return build


async def electronjs_windows(request: web.Request) -> web.Response:
    """GET /{owner}/{repo}/win32-{arch}/{version}/RELEASES: the stable Squirrel.Windows feed
    (the client decides from RELEASES; the version in the path is not needed)."""
    return await _serve(request, electronjs_windows_key, _windows_feed(request, STABLE))


async def squirrel_windows(request: web.Request) -> web.Response:
    """GET .../releases/feeds/squirrel/{arch}/RELEASES?channel=: RELEASES of one architecture.
    Squirrel appends `id`, `localVersion` and `arch` to the query: only `channel` matters."""
    return await _serve(request, squirrel_key, _windows_feed(request, _channel(request)))


def yml_answer(
    releases: RepoReleases, name: str, wanted: YmlFile, link: Callable[[Release, Asset], str]
) -> Answer | str:
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
    """GET .../releases/feeds/electron/{file}: `latest.yml`, `latest-mac.yml`, `beta-linux.yml`…
    from the newest release of the channel with files for it; a release that carries the file
    itself is answered with a redirect to it (served as uploaded). Any other name is a file a yml
    named relative to the feed: a redirect to its download (feeds/named_files.py)."""
    name = request.match_info["file"]
    wanted = parse_file_name(name)
    if wanted is None:
        return await _serve(request, _named_file_key, _named_file(name))

    def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> Answer | str:
        return yml_answer(releases, name, wanted, link)

    return await _serve(request, yml_key, build)


def remade_body(releases: RepoReleases, key: str) -> bytes:
    """The body of the answer kept under the feed key `key` (`feed mac ...`), made again from
    the releases, for the version it offered (insights/proxy_log.py); the URLs inside do not
    matter. b"" where nothing is offered, and for Tauri's answers, whose signatures are read
    from the storage (docs/insights.md "In Kubernetes")."""
    kind, *rest = key.removeprefix("feed ").split(" ")
    try:
        if kind == "mac" and len(rest) == 2:
            raw_arch = rest[0]
            answer: Answer | str = mac_answer(
                releases, rest[1], canonical_arch(raw_arch) or raw_arch.lower(), _nowhere
            )
        elif kind == "yml" and len(rest) == 1 and (wanted := parse_file_name(rest[0])):
            answer = yml_answer(releases, rest[0], wanted, _nowhere)
        else:
            return b""
    except (InvalidVersion, NoReleasesFound):
        return b""
    return answer.body if isinstance(answer, Answer) else b""


def _nowhere(release: Release, asset: Asset) -> str:
    return "/"


def _named_file_key(match: Mapping[str, str], request: web.BaseRequest) -> str:
    return f"file {match['file']}"


def _named_file(name: str) -> Build:
    def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> str:
        found = find_named(releases, name)
        if found is None:
            raise NoReleasesFound()
        return link(*found)

    return build


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
    channel = _channel(request)

    async def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> Answer:
        current = parse_version(raw_version)
        if current is None:
            raise InvalidVersion(raw_version)
        candidates = fully_rolled_out(newest_first(releases, channel))
        found = await tauri.dynamic(candidates, current, target, arch, link, _sign(request))
        if found is None:
            return NO_UPDATE
        body = dumps(found)
        return Answer(200, body, etag_of(body))

    return await _serve(request, tauri_key, build)


async def tauri_static(request: web.Request) -> web.Response:
    """GET .../releases/feeds/tauri/latest.json?channel=: the static form with `platforms`."""
    channel = _channel(request)

    async def build(releases: RepoReleases, link: Callable[[Release, Asset], str]) -> Answer:
        candidates = fully_rolled_out(newest_first(releases, channel))
        found = await tauri.static(candidates, link, _sign(request))
        if found is None:
            raise NoReleasesFound()
        body = dumps(found)
        return Answer(200, body, etag_of(body))

    return await _serve(request, tauri_json_key, build)
