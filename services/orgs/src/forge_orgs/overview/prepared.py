"""The organization overview, computed once per viewer class and kept until what it shows changes
(docs/orgs.md "Overview cache"). The JSON API and any other page showing the overview call
`prepared_overview`.

A viewer class is everything that decides the answer: anonymous, or signed in with the site-admin
flag, a role in the organization (owner, member, none) and the set of its private repositories
granted to them on their own (as collaborator or through a team; every permission reads, so the
set decides which private pins they see). Deciding a signed-in viewer's class costs one small
query; an anonymous viewer's none. The key is the whole class, so no class ever gets another's
answer.

Entries are dropped when PostgreSQL says the organization changed (NOTIFY on `CHANNEL` from the
triggers of migration 0002, heard on the process's one LISTEN connection), so every replica sees a
change at once. As in the releases cache, the cache is used only while delivery of notifications
is proven, each proof starts it empty, and a load that raced an invalidation is not stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web
from forge_common.auth import Viewer
from forge_common.db import connection
from forge_common.keys import DB_POOL, NOTIFICATIONS, SETTINGS
from forge_common.names import is_account_name
from forge_common.render import dumps

from .. import render
from ..context import require_visible
from ..errors import OrgNotFound
from ..models import OrgView
from ..visibility import Visible, filter_for_viewer
from . import queries as overview_db

CHANNEL = "forge_orgs"
# (signed in, site admin, role, private repositories granted to the viewer)
ViewerClass = tuple[bool, bool, str | None, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class Prepared:
    """One class's overview: the data, filtered for the class, and its JSON body."""

    org_id: int
    data: overview_db.Overview
    visible: Visible
    is_member: bool
    json: bytes


class OverviewCache:
    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self.enabled = False
        self._version = 0
        # (lower-cased name, class) → the prepared answer, or None: the class may not see it
        self._entries: dict[tuple[str, ViewerClass], tuple[int, Prepared | None]] = {}
        # read at scrape time (forge_orgs/metrics.py)
        self.hits = 0
        self.misses = 0
        self.invalidations: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._entries)

    def token(self) -> int:
        return self._version

    def get(self, key: tuple[str, ViewerClass]) -> tuple[int, Prepared | None] | None:
        if not self.enabled:
            return None
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(
        self, key: tuple[str, ViewerClass], org_id: int, prepared: Prepared | None, token: int
    ) -> None:
        if not self.enabled or token != self._version:
            return
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[key] = (org_id, prepared)

    def invalidate_org(self, org_id: int) -> None:
        self._version += 1
        self.invalidations["org"] += 1
        for key in [k for k, (org, _) in self._entries.items() if org == org_id]:
            del self._entries[key]

    def reset(self, *, enabled: bool) -> None:
        self._version += 1
        self.invalidations["all"] += 1
        self._entries.clear()
        self.enabled = enabled

    def on_notification(self, payload: str) -> None:
        if payload.startswith("o:") and payload[2:].isdigit():
            self.invalidate_org(int(payload[2:]))
        else:  # "*" or anything we do not understand: be safe
            self.reset(enabled=self.enabled)


OVERVIEW_CACHE = web.AppKey("orgs_overview_cache", OverviewCache)


def _prepare(
    app: web.Application, data: overview_db.Overview, view: OrgView, visible: Visible
) -> Prepared:
    base = app[SETTINGS].app_url
    body = {
        "organization": render.organization(base, view.org),
        "pinned_repos": render.pins(base, view.org, visible.pins),
        "pinned_groups": [render.group(g) for g in visible.groups],
        "public_members": [render.public_member(base, m) for m in data.members],
        "total_members": data.stats.public_member_count,
        "stats": render.stats(data.stats, visible.readable_repo_count, is_member=view.is_member),
    }
    return Prepared(data.org.id, data, visible, view.is_member, dumps(body))


async def prepared_overview(app: web.Application, name: str, viewer: Viewer | None) -> Prepared:
    """The overview `viewer` may see of organization `name` (OrgNotFound when none): one query
    and at most one bulk access decision, whatever the size, when it is not cached."""
    if not is_account_name(name):
        raise OrgNotFound()
    cache = app[OVERVIEW_CACHE]
    token = cache.token()  # before deciding the class: a change notified meanwhile voids it
    async with connection(app[DB_POOL]) as conn:
        key: tuple[str, ViewerClass] | None = None
        if viewer is None:
            key = (name.lower(), (False, False, None, ()))
        elif cache.enabled:
            facts = await overview_db.viewer_facts(conn, name, viewer.id)
            if facts is None:
                raise OrgNotFound()
            key = (name.lower(), (True, viewer.is_admin, facts.role, facts.granted))
        if key is not None and (found := cache.get(key)) is not None:
            if found[1] is None:
                raise OrgNotFound()
            return found[1]
        data = await overview_db.overview(conn, name, viewer.id if viewer else None)
        if data is None:
            raise OrgNotFound()
        granted = tuple(sorted(data.stats.granted_private_repo_ids))
        if key is not None and (data.role, granted) != key[1][2:]:
            key = None  # the role or grants changed between the two statements: not this class
        view = OrgView(data.org, viewer, data.role)
        try:
            require_visible(view)
        except OrgNotFound:
            if key is not None:
                cache.put(key, data.org.id, None, token)
            raise
        visible = await filter_for_viewer(conn, view, data.pins, data.groups, data.stats)
    prepared = _prepare(app, data, view, visible)
    if key is not None:
        cache.put(key, data.org.id, prepared, token)
    return prepared


async def overview_cache_context(app: web.Application) -> AsyncIterator[None]:
    """The cache hears `forge_orgs` on the process's one LISTEN connection; it is on only while
    delivery is proven, and each proof starts it empty."""
    cache, notifications = app[OVERVIEW_CACHE], app[NOTIFICATIONS]
    subscription = await notifications.subscribe(
        CHANNEL, cache.on_notification, on_state=lambda listening: cache.reset(enabled=listening)
    )
    try:
        yield
    finally:
        await notifications.unsubscribe(subscription)
        cache.reset(enabled=False)


def written(request: web.Request, org_id: int) -> None:
    """A write handler changed organization `org_id` and committed: drop its overviews here at
    once, so the writer reads their own write (other replicas hear the NOTIFY)."""
    request.app[OVERVIEW_CACHE].invalidate_org(org_id)
