"""The in-process cache behind the update check: name resolution, candidate releases and the
answers prepared from them (`Answer`, down to the bytes sent), and the one lookup of a kept answer
(`ReleaseCache.kept`) that the update check, the feeds and the list share, before routing
(forge_common.fast_path) and after.

Entries are dropped when PostgreSQL says the data changed (NOTIFY on `CHANNEL`, heard through the
process's one LISTEN connection, forge_common.notifications; subscribed in lifecycle.py), so every
replica sees a new release at once. The cache is only used while delivery of notifications is
proven: when it is not, `enabled` is false, nothing is read from or stored in the cache, and
requests query the database (correct, slower). Each proof of delivery starts from an empty cache,
since notifications sent while the connection was down or deaf are lost.

A load races with invalidations: it takes a `token()` before querying and `put_*` stores its result
only when no invalidation happened meanwhile, so a result read before a change is never kept after
the notification of that change.

The write side can call `invalidate_repo` directly after its own commit; the triggers of
migration 0002 notify every replica anyway.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import semver
from aiohttp import hdrs, web
from forge_common.access import Access
from forge_common.auth import is_anonymous
from forge_common.conditional import none_match

from ..httpcache import MICRO_CACHE_UNTIL, cache_headers, micro_cache_until
from ..models import Release, RepoRef, Resolved

# the feeds' step lists kept per repository (RepoReleases.steps): one per feed, arch and channel
STEPS_KEPT = 1024
BANDS_KEPT = 4096  # the request keys whose band is remembered, per repository


@dataclass(frozen=True, slots=True)
class Answer:
    """What the update check (or another read, read/handlers.py) sends: 204 (body empty) or 200
    with these exact bytes, with the headers for public and for private data prepared once;
    `headers` are added to both (X-Total-Count, Link)."""

    status: int
    body: bytes = b""
    etag: str = ""
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    public_headers: dict[str, str] = field(init=False)
    private_headers: dict[str, str] = field(init=False)
    # the public headers with X-Accel-Expires for the second in [0], remade once a second: a
    # copy per answer would cost the update check more than the cache saves
    _this_second: list[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        extra = {**self.headers}
        if self.body:
            extra.update({"ETag": self.etag, "Content-Type": self.content_type})
        object.__setattr__(self, "public_headers", {**cache_headers(True), **extra})
        object.__setattr__(self, "private_headers", {**cache_headers(False), **extra})
        object.__setattr__(self, "_this_second", [0, self.public_headers])

    def respond(self, request: web.BaseRequest, public: bool) -> web.Response:
        headers = self.public_headers if public else self.private_headers
        # the header test first: the hot path never parses an absent If-None-Match
        if self.etag and hdrs.IF_NONE_MATCH in request.headers and none_match(request, self.etag):
            return web.Response(
                status=304, headers={k: v for k, v in headers.items() if k != "Content-Type"}
            )
        if public:  # what nginx's micro-cache may keep: until this second ends
            headers = self._kept_until_this_second_ends()
        return web.Response(status=self.status, body=self.body or None, headers=headers)

    def _kept_until_this_second_ends(self) -> dict[str, str]:
        """The public headers with `X-Accel-Expires` (httpcache.micro_cache_until) for now."""
        now = int(time.time())
        if self._this_second[0] != now:
            headers = {**self.public_headers, MICRO_CACHE_UNTIL: micro_cache_until(now)}
            self._this_second[:] = [now, headers]
        kept: dict[str, str] = self._this_second[1]
        return kept


NO_UPDATE = Answer(204)


class _Missing(Enum):
    MISSING = 0


MISSING = _Missing.MISSING  # `get_name` when nothing is cached for the key

# What the triggers of migration 0002 NOTIFY: "r:<repo id>", "n" (names), "*" (everything).
CHANNEL = "forge_releases"


@dataclass(frozen=True, slots=True)
class RepoEntry:
    """A resolved repository path and what an anonymous caller may do with it: nothing when they
    may not see its owner (docs/access.md "Authentication rules"), which they are told as 404."""

    ref: RepoRef
    anonymous: Access
    owner_visible_to_anonymous: bool = True
    # prepared once: the resolution every anonymous caller gets (None: they may not read)
    for_anonymous: Resolved | None = field(init=False)

    def __post_init__(self) -> None:
        readable = self.anonymous >= Access.READ
        resolved = Resolved(self.ref, Access.READ, True) if readable else None
        object.__setattr__(self, "for_anonymous", resolved)


@dataclass(slots=True)
class RepoReleases:
    """Update-check candidates of one repository, plus answers already computed from them.

    `answers` maps a raw query string to a prepared answer; it lives and dies with this object, so
    an invalidation of the repository drops it too.
    """

    stable: tuple[Release, ...]
    everything: tuple[Release, ...]
    answers: dict[str, Answer] = field(default_factory=dict)
    # the versions of the withdrawn releases (never candidates): installs on them may be rolled
    # back (safety/decide.py)
    withdrawn: frozenset[str] = frozenset()
    # the required versions a feed's answers are banded by, under the key's words before the
    # running version (feeds/steps.py): found once per feed, arch and channel
    steps: dict[str, tuple[semver.Version, ...]] = field(default_factory=dict)
    # a request's key -> the key of its band's answer, worked out once per key (a repeated check
    # is one lookup, no version parsed)
    bands: dict[str, str] = field(default_factory=dict)

    def keep_steps(self, head: str, steps: tuple[semver.Version, ...]) -> None:
        """Keep a feed's required versions; a flood of channel names cannot grow memory."""
        if len(self.steps) >= STEPS_KEPT:
            self.steps.clear()
        self.steps[head] = steps

    def keep_band(self, key: str, kept_key: str) -> None:
        """Remember the band of a request's key; a flood of versions cannot grow memory."""
        if len(self.bands) >= BANDS_KEPT:
            self.bands.clear()
        self.bands[key] = kept_key


@dataclass(frozen=True, slots=True)
class CacheLimits:
    """Memory bounds: a few hundred MB at worst (up to 100 candidates per repository, a prepared
    answer about 1.5 kB), far less in practice."""

    names: int = 10_000
    repos: int = 2_000
    answers_per_repo: int = 1_024
    answers: int = 50_000  # over all repositories
    lists: int = 10_000  # release list pages kept, over all repositories
    # A kept list page shows download counts, which change without a notification (downloads
    # through another replica): it is kept this long at most (the nginx micro-cache's bound too).
    list_seconds: float = 1.0


class ReleaseCache:
    """Bounded maps; on overflow a map is cleared rather than tracked (cheap, and rare)."""

    def __init__(self, limits: CacheLimits | None = None) -> None:
        self.limits = limits or CacheLimits()
        self.enabled = False
        self._version = 0
        self._names: dict[tuple[str, str], RepoEntry | None] = {}
        self._repos: dict[int, RepoReleases] = {}
        self._answers_added = 0  # since answers were last dropped everywhere (an upper bound)
        # anonymous release list pages: repository id → raw query string → (kept until, answer)
        self._lists: dict[int, dict[str, tuple[float, Answer]]] = {}
        self._lists_added = 0
        # list pages being computed for anonymous callers (`shared_list`): (repository id, key) →
        # the page and whether it may be shared, or None when its computation failed
        self._computing: dict[tuple[int, str], asyncio.Future[tuple[Answer, bool] | None]] = {}
        # Read at scrape time (forge_releases/metrics.py): update checks answered from a prepared
        # answer, answers computed, and invalidations by kind ("repo", "names", "all").
        self.hits = 0
        self.misses = 0
        self.invalidations: Counter[str] = Counter()

    # --- reading and storing -------------------------------------------------------------

    def token(self) -> int:
        """Take before loading; pass to `put_*` (which ignore results older than a change)."""
        return self._version

    def get_name(self, key: tuple[str, str]) -> RepoEntry | _Missing | None:
        """The cached entry (None: no such repository), or MISSING."""
        if not self.enabled:
            return MISSING
        return self._names.get(key, MISSING)

    def put_name(self, key: tuple[str, str], entry: RepoEntry | None, token: int) -> None:
        if not self.enabled or token != self._version:
            return
        if len(self._names) >= self.limits.names:
            self._names.clear()
        self._names[key] = entry

    def get_repo(self, repo_id: int) -> RepoReleases | None:
        return self._repos.get(repo_id) if self.enabled else None

    def readable_by_anyone(
        self, request: web.BaseRequest, owner: str, repo: str
    ) -> RepoEntry | None:
        """The cached repository `{owner}/{repo}` when `request` is anonymous
        (`forge_common.auth.is_anonymous`) and an anonymous caller may read it; None: resolve it
        the full way (read/resolve.py). No await: the answers given before routing start here."""
        if not is_anonymous(request):
            return None
        entry = self.get_name((owner, repo))
        if not isinstance(entry, RepoEntry) or entry.for_anonymous is None:
            return None
        return entry

    def kept(self, releases: RepoReleases, key: str) -> Answer | None:
        """The one lookup of a kept answer (the update check's under its raw query string, a
        feed's under its own key), before routing and after."""
        answer = releases.answers.get(key)
        if answer is not None:
            self.hits += 1
        return answer

    def put_repo(self, repo_id: int, releases: RepoReleases, token: int) -> None:
        if not self.enabled or token != self._version:
            return
        if len(self._repos) >= self.limits.repos:
            self._repos.clear()
        self._repos[repo_id] = releases

    def remember_answer(self, releases: RepoReleases, key: str, answer: Answer) -> None:
        """Keep a prepared answer; varied query strings (cache busters) cannot grow memory."""
        self.misses += 1
        if self._answers_added >= self.limits.answers:
            for cached in self._repos.values():
                cached.answers.clear()
            self._answers_added = 0
        if len(releases.answers) >= self.limits.answers_per_repo:
            releases.answers.clear()
        releases.answers[key] = answer
        self._answers_added += 1

    def drop_answers(self, prefix: str) -> None:
        """Drop the kept answers whose key starts with `prefix`, in every repository: signed
        metadata that expires (linux/apt.py), made again on its next request."""
        for cached in self._repos.values():
            for key in [key for key in cached.answers if key.startswith(prefix)]:
                del cached.answers[key]

    def get_list(self, repo_id: int, key: str) -> Answer | None:
        """A release list page an anonymous caller was given within `list_seconds`."""
        if not self.enabled:
            return None
        found = self._lists.get(repo_id, {}).get(key)
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def put_list(self, repo_id: int, key: str, answer: Answer, token: int) -> None:
        if not self.enabled or token != self._version:
            return
        if self._lists_added >= self.limits.lists:
            self._lists.clear()
            self._lists_added = 0
        pages = self._lists.setdefault(repo_id, {})
        pages[key] = (time.monotonic() + self.limits.list_seconds, answer)
        self._lists_added += 1

    async def shared_list(
        self, repo_id: int, key: str, compute: Callable[[], Awaitable[tuple[Answer, bool]]]
    ) -> tuple[Answer, bool]:
        """A list page for an anonymous caller when none is kept: `compute()` gives it and whether
        it may be shared (kept); computed once for every caller asking for the same page while
        it is being computed, then kept. Without this, all the connections that find the page
        expired at the same moment each count the repository's releases (bench/RESULTS.md:
        64 counts of 100,000 releases a second at 64 connections). A caller arriving after a
        change (an invalidation, a counted download) starts a computation of its own."""
        if not self.enabled:
            return await compute()
        flight = (repo_id, key)
        if (computing := self._computing.get(flight)) is not None:
            found = await asyncio.shield(computing)  # another caller's cancellation is not ours
            if found is not None and found[1]:
                return found
            return await compute()  # it failed (this caller gets its own answer or error)
        token = self.token()
        future: asyncio.Future[tuple[Answer, bool] | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._computing[flight] = future
        found = None
        try:
            found = await compute()
        finally:
            future.set_result(found)
            if self._computing.get(flight) is future:
                del self._computing[flight]
        if found[1]:
            self.put_list(repo_id, key, found[0], token)
        return found

    def downloaded(self, repo_id: int) -> None:
        """A download of the repository was counted: its list pages show the count."""
        self._lists.pop(repo_id, None)
        self._stop_sharing(repo_id)

    def _stop_sharing(self, repo_id: int | None = None) -> None:
        """Pages being computed are not shared with callers arriving from now on (of `repo_id`,
        or of every repository): they may predate a change."""
        for flight in [f for f in self._computing if repo_id is None or f[0] == repo_id]:
            del self._computing[flight]

    def sizes(self) -> dict[str, int]:
        """Entries held, by kind (for metrics)."""
        answers = sum(len(cached.answers) for cached in self._repos.values())
        lists = sum(len(pages) for pages in self._lists.values())
        return {
            "names": len(self._names),
            "repos": len(self._repos),
            "answers": answers,
            "lists": lists,
        }

    # --- invalidation --------------------------------------------------------------------

    def invalidate_repo(self, repo_id: int) -> None:
        """A repository's releases or assets changed."""
        self.invalidations["repo"] += 1
        self._version += 1
        self._repos.pop(repo_id, None)
        self._lists.pop(repo_id, None)
        self._stop_sharing(repo_id)

    def invalidate_names(self) -> None:
        """Accounts or repositories changed: any path may now resolve differently, and prepared
        answers hold download URLs spelled with owner and repository names, so both go."""
        self.invalidations["names"] += 1
        self._version += 1
        self._names.clear()
        self._repos.clear()
        self._lists.clear()
        self._stop_sharing()

    def reset(self, *, enabled: bool) -> None:
        """Drop everything; `enabled` says whether change notifications are being received."""
        self.invalidations["all"] += 1
        self._version += 1
        self._names.clear()
        self._repos.clear()
        self._lists.clear()
        self._stop_sharing()
        self.enabled = enabled

    def on_notification(self, payload: str) -> None:
        """Apply one payload of the `forge_releases` channel (see migration 0002)."""
        if payload == "n":
            self.invalidate_names()
        elif payload.startswith("r:") and payload[2:].isdigit():
            self.invalidate_repo(int(payload[2:]))
        else:  # "*" or anything we do not understand: be safe
            self.reset(enabled=self.enabled)
