"""The orgs part of the world file: `orgs[i].pin_groups` and `orgs[i].pins`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import asyncpg
from forge_common import checks
from forge_common.config import Settings
from forge_common.service import WorldIds

MAX_GROUP_NAME = 100


def validate(world: Mapping[str, Any], errors: list[str]) -> None:
    orgs, repos = world.get("orgs"), world.get("repos")
    if not isinstance(orgs, list):
        return
    repo_names = {
        (r["owner"].lower(), r["name"].lower())
        for r in (repos if isinstance(repos, list) else [])
        if isinstance(r, dict)
        and isinstance(r.get("owner"), str)
        and isinstance(r.get("name"), str)
    }
    for i, org in enumerate(orgs):
        if not isinstance(org, dict):
            continue
        path = f"orgs[{i}]"
        org_name = str(org.get("name", "")).lower()
        groups = []
        for j, group_entry in enumerate(checks.entries(org, "pin_groups", path, errors)):
            gpath = f"{path}.pin_groups[{j}]"
            name = checks.text(group_entry, "name", gpath, errors, required=True)
            if len(name) > MAX_GROUP_NAME:
                errors.append(f"{gpath}.name: must be at most {MAX_GROUP_NAME} characters")
            checks.number(group_entry, "display_order", gpath, errors)
            checks.flag(group_entry, "collapsed", gpath, errors)
            groups.append((f"{gpath}.name", name))
        checks.unique(groups, errors, "pin group")
        group_names = {name.lower() for _, name in groups}
        pinned = []
        for j, pin in enumerate(checks.entries(org, "pins", path, errors)):
            ppath = f"{path}.pins[{j}]"
            repo = checks.text(pin, "repo", ppath, errors, required=True)
            if repo and (org_name, repo.lower()) not in repo_names:
                errors.append(
                    f"{ppath}.repo: no repository {repo!r} of this organization in the file"
                )
            group = checks.text(pin, "group", ppath, errors)
            if group and group.lower() not in group_names:
                errors.append(f"{ppath}.group: no pin group {group!r} in this organization")
            checks.number(pin, "display_order", ppath, errors)
            pinned.append((f"{ppath}.repo", repo))
        checks.unique(pinned, errors, "pinned repository")


async def load(
    conn: asyncpg.Connection[Any], world: Mapping[str, Any], ids: WorldIds, settings: Settings
) -> None:
    for org in world.get("orgs", []):
        org_id = ids.accounts[org["name"].lower()]
        group_ids: dict[str, int] = {}
        for group in org.get("pin_groups", []):
            group_ids[group["name"].lower()] = await conn.fetchval(
                """INSERT INTO orgs.pin_groups (org_id, name, display_order, collapsed)
                   VALUES ($1, $2, $3, $4) RETURNING id""",
                org_id,
                group["name"],
                group.get("display_order", 0),
                group.get("collapsed", False),
            )
        for pin in org.get("pins", []):
            await conn.execute(
                """INSERT INTO orgs.pins (org_id, repo_id, group_id, display_order)
                   VALUES ($1, $2, $3, $4)""",
                org_id,
                ids.repos[(org["name"].lower(), pin["repo"].lower())],
                group_ids.get(pin.get("group", "").lower()) if pin.get("group") else None,
                pin.get("display_order", 0),
            )
