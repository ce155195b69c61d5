"""GET /api/v2/repos/{owner}/{repo}/update: forge's own update check, the spec's answer
(AppUpdateResponse) decided with the rules of release safety (decide.py). The spec's
`/releases/update` keeps the spec's rules: it never sets `mandatory` and never offers a lower
version (docs/release-safety.md "The spec's update check").

Beside the spec check's query: `allow_downgrade=true` says the app installs a lower version
(electron-updater's `allowDowngrade`, Velopack's `AllowVersionDowngrade`): an install on a
withdrawn version is then rolled back. `mandatory` is true when a critical release of the channel
is above the running version.
"""

from __future__ import annotations

from functools import partial

import semver
from aiohttp import web
from forge_common.asset_match import match_asset
from forge_common.conditional import etag_of
from forge_common.keys import SETTINGS
from forge_common.render import dumps
from forge_common.versions import parse_version

from ..access_keys.grant import names_key
from ..access_keys.signed_urls import handed_out_url, signed
from ..errors import InvalidVersion
from ..keys import RELEASE_CACHE
from ..models import RepoRef
from ..read.cache import NO_UPDATE, Answer, RepoReleases
from ..read.params import flag
from ..read.render import UrlMap, unchanged
from ..read.resolve import resolve
from ..read.update import STABLE
from ..read.update_check import repo_releases, update_body
from .decide import Candidate, view_for

# kept answers of this check live beside the spec check's (keyed by raw query) and the feeds'
_KEY_PREFIX = "safe "


def _by_version(releases: RepoReleases, channel: str) -> list[Candidate]:
    """The spec's candidates of the channel (update rule 3), highest version first."""
    pool = releases.stable if channel == STABLE else releases.everything
    found = [(v, r) for r in pool if (v := parse_version(r.tag)) is not None]
    found.sort(key=lambda item: item[0], reverse=True)
    return found


def decide(
    request: web.Request, ref: RepoRef, releases: RepoReleases, url_for: UrlMap = unchanged
) -> Answer:
    settings, query = request.app[SETTINGS], request.query
    raw_version = query.get("version", "")
    current: semver.Version | None = parse_version(raw_version)
    if current is None:
        raise InvalidVersion(raw_version)
    platform = query.get("platform") or settings.server_os
    arch = query.get("arch") or settings.server_arch
    channel = query.get("channel") or STABLE
    view = view_for(
        _by_version(releases, channel),
        current,
        releases.withdrawn,
        can_go_down=flag(query, "allow_downgrade"),
    )
    above = [release for version, release in view.candidates if version > view.current]
    if not above:
        return NO_UPDATE
    asset = match_asset(above[0].assets, platform, arch)
    if asset is None:
        return NO_UPDATE
    body = update_body(settings.app_url, ref.owner, ref.name, above[0], asset, platform, url_for)
    if view.mandatory:
        body["mandatory"] = True
    data = dumps(body)
    return Answer(200, data, etag_of(data))


async def safe_update_check(request: web.Request) -> web.Response:
    resolved = await resolve(request)
    releases = await repo_releases(request.app, resolved.ref.repo_id)
    if signed(request):  # URLs signed for this caller: neither shared nor kept
        own = decide(request, resolved.ref, releases, partial(handed_out_url, request))
        return own.respond(request, False)
    cache = request.app[RELEASE_CACHE]
    key = _KEY_PREFIX + request.rel_url.raw_query_string
    answer = cache.kept(releases, key)
    if answer is None:
        answer = decide(request, resolved.ref, releases)
        if not names_key(request):
            cache.remember_answer(releases, key, answer)
    return answer.respond(request, resolved.public)
