"""Every update feed, in the order the router tries them (feed.py says what a record holds).
Adding a feed: its module (the handler, the answer and its record) and one entry here; the route,
the lane before routing, insights, the console and the OpenAPI document follow from the record,
and tests/test_feed_registry.py walks it.

The router tries the feeds under the release API and those at `/{owner}/{repo}/...` apart (its
index is by literal prefix), so the order only says which of each group comes first."""

from __future__ import annotations

from ..errors import InvalidVersion, NoReleasesFound
from ..linux import apt, rpm
from ..read.cache import Answer, RepoReleases
from . import electron_updater, squirrel_mac, squirrel_windows, tauri_updater, velopack
from .feed import Feed, FileRoute, Updater

FEEDS: tuple[Feed, ...] = (
    squirrel_windows.FEED,
    squirrel_mac.FEED,
    electron_updater.FEED,
    tauri_updater.STATIC,
    tauri_updater.DYNAMIC,
    squirrel_windows.ELECTRONJS,
    velopack.FEED,
    apt.RELEASE,
    apt.PACKAGES,
    rpm.REPODATA,
)
# routes of files a feed names relative to itself, after every feed (the router tries them in
# order: `velopack/releases.{channel}.json` is the feed's, any other name under it a package's)
FILES: tuple[FileRoute, ...] = (velopack.PACKAGES, *apt.FILES, *rpm.FILES)
BY_KIND = {feed.kind: feed for feed in FEEDS}
if len(BY_KIND) != len(FEEDS):
    raise RuntimeError("two feeds keep their answers under the same kind of key")
# the `feed` dimension of every feed (insights/dimensions.py), in order, once each
NAMES = tuple(dict.fromkeys(feed.name for feed in FEEDS))
# every updater a feed offers releases to (console/updaters.py), in order, once each
UPDATERS: tuple[Updater, ...] = tuple(
    dict.fromkeys(updater for feed in FEEDS for updater in feed.updaters)
)


def feed_of(key: str) -> tuple[Feed, dict[str, str]] | None:
    """The feed a kept answer's key (`feed <kind> ...`) belongs to and the key's named parts."""
    kind = key[len("feed ") :].split(" ", 1)[0]
    feed = BY_KIND.get(kind)
    if feed is None:
        return None
    parts = feed.parts_of(key)
    return None if parts is None else (feed, parts)


def kept_key(releases: RepoReleases, key: str) -> str:
    """The key the answer to a request known by `key` is kept under: a feed's band of required
    steps (feed.py `Feed.kept_key`), else `key` itself."""
    found = feed_of(key)
    return (found[0].kept_key(releases, key) or key) if found is not None else key


def remade_body(releases: RepoReleases, key: str) -> bytes:
    """The body of the answer kept under the feed key `key`, made again from the releases, for
    the version it offered (insights/proxy_log.py); the URLs inside do not matter. b"" where
    nothing is offered, and for a feed whose body cannot be made from the releases alone."""
    found = feed_of(key)
    remade = None if found is None else found[0].remade
    if found is None or remade is None:
        return b""
    try:
        answer = remade(releases, found[1])
    except (InvalidVersion, NoReleasesFound):
        return b""
    return answer.body if isinstance(answer, Answer) else b""
