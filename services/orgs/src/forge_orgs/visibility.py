"""What a viewer may see of an organization's pins, groups and repositories
(docs/access.md "Privacy decisions"; the details in docs/orgs.md "Decisions").

Repository access is decided by the shared rules only. `decide` on the organization-wide facts
says what the viewer may read of this organization's public and private repositories without a
grant of their own (a collaborator or team permission); since grants only raise access, that
answer holds for every repository of the kind. The rest — private pins and private repositories
on which the viewer holds a grant, for viewers who cannot read private repositories anyway — go
to the resolver in one bulk `repository_access` call, never one per pin. The counts cost the same
for 10 or 10,000 repositories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge_common.access import Access, AccessFacts, decide, repository_access
from forge_common.db import Conn

from .models import Group, OrgView, Pin, Stats


@dataclass(frozen=True, slots=True)
class Visible:
    pins: list[Pin]
    groups: list[Group]
    readable_repo_count: int


def _org_wide(view: OrgView, *, private: bool) -> Access:
    """The viewer's access to a repository of this organization with no grant of their own."""
    facts = AccessFacts(
        owner_id=view.org.id,
        owner_is_org=True,
        owner_visibility=view.org.visibility,
        private=private,
        public_landing=False,
        public_releases=False,
        member_role=view.role,
    )
    return decide(facts, view.viewer)


async def filter_for_viewer(
    conn: Conn,
    view: OrgView,
    pins: Sequence[Pin],
    groups: Sequence[Group],
    stats: Stats | None = None,
) -> Visible:
    """Pins whose repository the viewer can read, the groups holding one of them (all groups for
    organization owners), and how many of the organization's repositories the viewer can read
    (when `stats` is given)."""
    public_ok = _org_wide(view, private=False) >= Access.READ
    private_ok = _org_wide(view, private=True) >= Access.READ
    # Only repositories whose answer is not settled organization-wide go to the resolver, in
    # one bulk call: access only grows with a grant of the viewer's own, so a level reached
    # without one holds for every repository of that kind.
    granted = list(stats.granted_private_repo_ids) if stats else []
    unsettled = {p.repo_id for p in pins if not (private_ok if p.repo.private else public_ok)}
    if not private_ok:
        unsettled.update(granted)
    levels = await repository_access(conn, view.viewer, sorted(unsettled)) if unsettled else {}

    def readable(repo_id: int, private: bool) -> bool:
        if repo_id in unsettled:
            return levels.get(repo_id, Access.NONE) >= Access.READ
        return private_ok if private else public_ok

    visible_pins = [p for p in pins if readable(p.repo_id, p.repo.private)]
    # docs/orgs.md "Decisions": groups without a visible pin are left out for non-owners
    if view.is_owner:
        visible_groups = list(groups)
    else:
        used = {p.group_id for p in visible_pins}
        visible_groups = [g for g in groups if g.id in used]
    count = 0
    if stats is not None:
        count += stats.public_repo_count if public_ok else 0
        if private_ok:
            count += stats.private_repo_count
        else:
            count += sum(1 for repo_id in granted if readable(repo_id, True))
    return Visible(visible_pins, visible_groups, count)
