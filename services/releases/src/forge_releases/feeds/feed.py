"""One record per update feed (`Feed`): every fact the service keeps about a feed, in one place,
so adding a feed is one module and one entry in registry.py. The route table (routes.py), the
lane before routing (`serving.fast_key`), insights (the dimensions of a kept answer's key, the
nginx log reader's URI → key, the body remade for counting behind nginx), the console's list of
updaters and the OpenAPI document all read the registry; tests/test_feed_registry.py walks every
entry from a request target to its key, dimensions and remade body.

A feed's answer is kept under `feed <kind> <parts...>` (a space never occurs in the raw query
strings the update check keys by): `key` is that template after `feed `, filled from the route's
variable parts, then the `?channel=` (stable when absent) for a feed that has channels, then its
`query_parts` if it has any. A feed with required steps (`Stepped`) keeps its answer under the
key with its last word, the running version, replaced by the version's band (steps.py).
"""

from __future__ import annotations

import string
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ..models import Asset, Release
from ..read.cache import Answer, RepoReleases
from ..read.update import STABLE
from .steps import Steps, band, step_above

RELEASES_API = "/api/v2/repos/{owner}/{repo}/releases"  # routes.py API
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# a part of the key -> the raw values of the dimensions it says (one part may say several)
Expand = Callable[[str], Mapping[str, str]]
# (the releases, the key's parts by name) -> the answer kept under that key, made again, with
# URLs that do not matter; raising InvalidVersion or NoReleasesFound where the route does
Remake = Callable[[RepoReleases, Mapping[str, str]], Answer | str]
Link = Callable[[Release, Asset], str]


@dataclass(frozen=True, slots=True)
class Counted:
    """How a kept answer's key becomes insights' dimensions (insights/dimensions.py normalises
    each value): the dimension each named part of the key fills (`running`, `platform`, `arch`,
    `channel`), or a function saying several; the values every answer of the feed has; the JSON
    field of the body naming the version offered ('' when the body names none)."""

    parts: Mapping[str, str | Expand]
    fixed: Mapping[str, str] = field(default_factory=dict)
    offered: str = ""


@dataclass(frozen=True, slots=True)
class Updater:
    """An updater the console names as offered a release, and the file-name endings that make
    this feed offer the release to it (the feed's own matching decides the details)."""

    label: str
    endings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QueryPart:
    """A part of the key made from the query (after the route's parts and the `?channel=`): what
    of the query changes the answer, reduced to the few values it can take (Velopack's
    per-install `stagingId` becomes its staged-rollout bucket, feeds/velopack.py)."""

    name: str
    of: Callable[[Mapping[str, str]], str]


@dataclass(frozen=True, slots=True)
class Stepped:
    """A feed that offers required steps (steps.py): the key's last part is the running version
    the request told, and `of` finds the required versions from the releases and the key's parts
    (None: not before an answer is built, as Velopack's, read from its packages)."""

    of: Callable[[RepoReleases, Mapping[str, str]], Steps | None]


@dataclass(frozen=True, slots=True)
class FileRoute:
    """A route beside a feed that serves files the feed names relative to itself (Velopack's
    packages): registered after the feeds, documented from `operation`, never kept or counted
    as a check (downloads count themselves)."""

    path: str
    handler: Handler
    operation: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Feed:
    name: str  # the `feed` dimension insights stores (two routes of one updater may share it)
    path: str  # the route
    handler: Handler
    key: str  # the kept answer's key after `feed `: `<kind> {variable} ...`
    counted: Counted
    operation: Mapping[str, Any]  # the route's GET in the OpenAPI document
    channel: bool = False  # the key ends with the `?channel=`
    remade: Remake | None = None  # None: its body cannot be made from the releases alone
    updaters: tuple[Updater, ...] = ()
    query_parts: tuple[QueryPart, ...] = ()
    stepped: Stepped | None = None
    _template: str = field(init=False, repr=False)
    _names: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_template", f"feed {self.key}")
        names = tuple(name for _, name, _, _ in string.Formatter().parse(self.key) if name)
        names = (*names, "channel") if self.channel else names
        names = (*names, *(part.name for part in self.query_parts))
        object.__setattr__(self, "_names", names)

    @property
    def kind(self) -> str:
        """The key's first word, which names the feed a key belongs to."""
        return self.key.split(" ", 1)[0]

    def key_of(self, match: Mapping[str, str], query: Mapping[str, str]) -> str:
        """The key of the answer to the request with these variable parts and query."""
        made = self._template.format_map(match)
        if self.channel:
            made = f"{made} {query.get('channel') or STABLE}"
        for part in self.query_parts:
            made = f"{made} {part.of(query)}"
        return made

    def kept_key(self, releases: RepoReleases, key: str) -> str | None:
        """The key the answer to a request known by `key` is kept under: `key` itself, or for a
        feed with steps its running version's band (None: the steps are not known yet)."""
        if self.stepped is None:
            return key
        kept = releases.bands.get(key)
        if kept is not None:
            return kept
        head, _, running = key.rpartition(" ")
        steps = releases.steps.get(head)
        if steps is None:
            parts = self.parts_of(key)
            # a part with a space in it (`?channel=a%20b`): no steps, whatever its words say
            steps = () if parts is None else self.stepped.of(releases, parts)
            if steps is None:
                return None
            releases.keep_steps(head, steps)
        kept = f"{head} {band(step_above(steps, running))}"
        releases.keep_band(key, kept)
        return kept

    def parts_of(self, key: str) -> dict[str, str] | None:
        """The named parts of one of this feed's keys; None if it has not as many."""
        words = key.split(" ")[2:]
        if len(words) != len(self._names):
            return None
        return dict(zip(self._names, words, strict=True))
