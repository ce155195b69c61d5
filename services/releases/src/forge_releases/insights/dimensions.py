"""What one counted answer says, in the stored dimensions (docs/insights.md "Dimensions"): the
feed, the version the client runs, the version offered, platform, architecture, channel and file.

The hot path counts the key its answer is kept under (the raw query string of the update check,
`feed ...` for a feed: read/update_check.py, feeds/feed.py) with the answer's body; these
pure functions turn such a key into dimensions once per flush, not once per request. Every value
is normalised to a short, bounded vocabulary: a value outside it is stored as `other`, so no
free text a client sends (an identifier in a channel name, say) ever reaches the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

import orjson
from forge_common.asset_match import canonical_arch, facts
from forge_common.versions import parse_version

from ..feeds.registry import NAMES, feed_of
from ..read.update import STABLE

OTHER = "other"
# the platforms the check's table knows (read/update.py), in the feeds' words
_PLATFORMS = {"darwin": "darwin", "macos": "darwin", "windows": "windows", "win32": "windows"}
_PLATFORMS["linux"] = "linux"
_CHANNEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}")
_MAX_VERSION = 64
# the `feed` dimension's values: the spec's check, every feed's (feeds/registry.py), downloads
FEEDS = ("update", *NAMES, "download")
DIMENSIONS = ("running", "offered", "platform", "arch", "channel", "feed", "file")


@dataclass(frozen=True, slots=True)
class Defaults:
    """The update check's defaults (docs/releases.md rule 2): the server's platform and arch."""

    platform: str
    arch: str


@dataclass(frozen=True, slots=True)
class Dims:
    kind: str  # check | download
    feed: str
    running: str = ""
    offered: str = ""
    platform: str = ""
    arch: str = ""
    channel: str = ""
    file: str = ""


def version(text: str) -> str:
    """A version as counted: canonical SemVer without `v`; '' when not said, `other` when it is
    no version or too long to be one anybody ships."""
    if not text:
        return ""
    parsed = parse_version(text)
    if parsed is None:
        return OTHER
    canonical = str(parsed)
    return canonical if len(canonical) <= _MAX_VERSION else OTHER


def platform(text: str) -> str:
    return _PLATFORMS.get(text.lower(), OTHER) if text else ""


def arch(text: str) -> str:
    if not text:
        return ""
    return canonical_arch(text) or OTHER


def channel(text: str) -> str:
    lowered = text.lower()
    return lowered if _CHANNEL.fullmatch(lowered) else OTHER


def _offered(body: bytes, field: str) -> str:
    """The version an answer offers: its JSON `field` ('' for an empty answer: up to date)."""
    if not body:
        return ""
    try:
        value = orjson.loads(body).get(field, "")
    except (orjson.JSONDecodeError, AttributeError):
        return ""
    return version(value) if isinstance(value, str) else ""


def short_key(query: str) -> str:
    """The update check's raw query reduced to the four parameters it reads (first values, as
    aiohttp's `request.query.get`), each at most 64 characters: what `of_check` reads alike."""
    kept: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in ("version", "platform", "arch", "channel"):
            kept.setdefault(name, value[:64])
    return urlencode(kept)


def of_check(key: str, body: bytes, defaults: Defaults) -> Dims:
    """The dimensions of one answer kept under `key` with `body`."""
    if key.startswith("feed "):
        return _of_feed(key, body)
    # the check reads the first value of each parameter, as aiohttp's `request.query.get` does
    query: dict[str, str] = {}
    for name, value in parse_qsl(key, keep_blank_values=True):
        query.setdefault(name, value)
    return Dims(
        "check",
        "update",
        running=version(query.get("version", "")),
        offered=_offered(body, "name"),
        platform=platform(query.get("platform") or defaults.platform),
        arch=arch(query.get("arch") or defaults.arch),
        channel=channel(query.get("channel") or STABLE),
    )


# how each dimension a feed's key says is normalised
_NORMALISED = {"running": version, "platform": platform, "arch": arch, "channel": channel}


def _of_feed(key: str, body: bytes) -> Dims:
    """The dimensions of a feed's answer: what its record says the key's parts are (feed.py
    `Counted`), each normalised; what the key does not say stays ''."""
    found = feed_of(key)
    if found is None:
        return Dims("check", OTHER)
    feed, parts = found
    said = dict(feed.counted.fixed)
    for name, value in parts.items():
        fills = feed.counted.parts[name]
        if isinstance(fills, str):
            said[fills] = value
        else:
            said.update(fills(value))
    dims = {dim: _NORMALISED[dim](value) for dim, value in said.items()}
    offered = _offered(body, feed.counted.offered) if feed.counted.offered else ""
    return Dims("check", feed.name, offered=offered, **dims)


def of_download(name: str) -> Dims:
    """A completed download of file `name`: what its name says. The version offered (the
    release's tag) and the channel are read from the release by the writing statement."""
    said = facts(name)
    return Dims(
        "download", "download", platform=said.platform or "", arch=said.arch or "", file=name
    )
