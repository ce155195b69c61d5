"""The orgs part of the world file: `orgs[i].pin_groups` and `orgs[i].pins`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any

import asyncpg
from forge_common import checks
from forge_common.config import Settings
from forge_common.service import WorldIds
from forge_common.world import declared_repos

from .groups.queries import insert_group
from .payloads import MAX_GROUP_NAME
from .pins.queries import insert_pin


def validate(world: Mapping[str, Any], errors: list[str]) -> None:
    repos = declared_repos(world)
    # Core reports a malformed orgs section or entry; only well-formed organizations are read.
    for path, org in checks.objects(world, "orgs"):
        org_name = str(org.get("name", "")).lower()
        org_repos = {repo for owner, repo in repos if owner == org_name}
        group_names = _validate_pin_groups(org, path, errors)
        _validate_pins(org, path, org_repos, group_names, errors)


def _validate_pin_groups(org: Mapping[str, Any], path: str, errors: list[str]) -> set[str]:
    """The organization's group names, lower-cased, for its pins to refer to."""
    groups = []
    for j, group in enumerate(checks.entries(org, "pin_groups", path, errors)):
        gpath = f"{path}.pin_groups[{j}]"
        name = checks.display_name(
            group, "name", gpath, errors, required=True, max_length=MAX_GROUP_NAME
        )
        checks.number(group, "display_order", gpath, errors)
        checks.flag(group, "collapsed", gpath, errors)
        groups.append((f"{gpath}.name", name))
    checks.unique(groups, errors, "pin group")
    return {name.lower() for _, name in groups}


def _validate_pins(
    org: Mapping[str, Any], path: str, repos: Set[str], groups: Set[str], errors: list[str]
) -> None:
    """`repos` and `groups` are the organization's in the file, lower-cased."""
    pinned = []
    for j, pin in enumerate(checks.entries(org, "pins", path, errors)):
        ppath = f"{path}.pins[{j}]"
        repo = checks.text(pin, "repo", ppath, errors, required=True)
        if repo and repo.lower() not in repos:
            errors.append(f"{ppath}.repo: no repository {repo!r} of this organization in the file")
        group = checks.text(pin, "group", ppath, errors)
        if group and group.lower() not in groups:
            errors.append(f"{ppath}.group: no pin group {group!r} in this organization")
        checks.number(pin, "display_order", ppath, errors)
        pinned.append((f"{ppath}.repo", repo))
    checks.unique(pinned, errors, "pinned repository")


async def load(
    conn: asyncpg.Connection[Any], world: Mapping[str, Any], ids: WorldIds, settings: Settings
) -> None:
    for org in world.get("orgs", []):
        name = org["name"].lower()
        org_id = ids.accounts[name]
        group_ids = await _load_pin_groups(conn, org_id, org.get("pin_groups", []))
        for pin in org.get("pins", []):
            group_id = group_ids.get(pin["group"].lower()) if pin.get("group") else None
            repo_id = ids.repos[(name, pin["repo"].lower())]
            await insert_pin(conn, org_id, repo_id, group_id, pin.get("display_order", 0))


async def _load_pin_groups(
    conn: asyncpg.Connection[Any], org_id: int, groups: Iterable[Mapping[str, Any]]
) -> dict[str, int]:
    """Lower-cased name → id of each group added."""
    ids = {}
    for group in groups:
        display_order, collapsed = group.get("display_order", 0), group.get("collapsed", False)
        added = await insert_group(conn, org_id, group["name"], display_order, collapsed)
        ids[group["name"].lower()] = added.id
    return ids
