"""What a viewer may see of an organization's pins, groups and repositories (DESIGN §5).

Every read decides repository access with one bulk call of the shared resolver, never one per pin.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from forge_common.access import Access, repository_access

from .dbconn import Conn
from .models import Group, OrgView, Pin


@dataclass(frozen=True, slots=True)
class Visible:
    pins: list[Pin]
    groups: list[Group]
    readable_private_repos: int


async def filter_for_viewer(
    conn: Conn,
    view: OrgView,
    pins: Sequence[Pin],
    groups: Sequence[Group],
    private_repo_ids: Iterable[int] = (),
) -> Visible:
    """Pins whose repository the viewer can read, groups holding one of them (all groups for
    those who manage them), and how many of `private_repo_ids` the viewer can read."""
    private_ids = list(private_repo_ids)
    ids = sorted({p.repo_id for p in pins} | set(private_ids))
    levels = await repository_access(conn, view.viewer, ids)

    def readable(repo_id: int) -> bool:
        return levels.get(repo_id, Access.NONE) >= Access.READ

    visible_pins = [p for p in pins if readable(p.repo_id)]
    if view.can_manage:
        visible_groups = list(groups)
    else:
        used = {p.group_id for p in visible_pins}
        visible_groups = [g for g in groups if g.id in used]
    return Visible(visible_pins, visible_groups, sum(1 for i in private_ids if readable(i)))
