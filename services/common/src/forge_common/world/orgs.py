"""`orgs[i]`: organizations and their members. Teams are in `teams.py`; pins and pin groups
belong to the orgs service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg

from .. import checks
from .names import Names

VISIBILITIES = frozenset({"public", "limited", "private"})


def validate_org(org: Mapping[str, Any], path: str, errors: list[str]) -> str:
    """The organization's name, for the checks across every account."""
    name = checks.text(org, "name", path, errors, required=True, pattern=checks.NAME)
    checks.display_name(org, "full_name", path, errors)
    for key in ("description", "website", "location"):
        checks.text(org, key, path, errors)
    checks.text(org, "visibility", path, errors, choices=VISIBILITIES)
    return name


def validate_members(
    org: Mapping[str, Any], path: str, names: Names, errors: list[str]
) -> set[str]:
    """The organization's members, lower-cased, for its teams to be checked against."""
    members: set[str] = set()
    for j, member in enumerate(checks.entries(org, "members", path, errors)):
        mpath = f"{path}.members[{j}]"
        user = checks.text(member, "user", mpath, errors, required=True)
        if user and not names.is_user(user):
            errors.append(f"{mpath}.user: unknown user {user!r}")
        if user.lower() in members:
            errors.append(f"{mpath}.user: {user!r} is listed twice")
        members.add(user.lower())
        checks.flag(member, "owner", mpath, errors)
        checks.flag(member, "public", mpath, errors)
    return members


async def load_orgs(
    conn: asyncpg.Connection[Any], orgs: Iterable[Mapping[str, Any]], accounts: Mapping[str, int]
) -> dict[str, int]:
    """Lower-cased name → id of each organization added; `accounts` has its members' ids."""
    ids = {}
    for org in orgs:
        org_id = await _insert_org(conn, org)
        ids[org["name"].lower()] = org_id
        for member in org.get("members", []):
            await _insert_member(conn, org_id, accounts[member["user"].lower()], member)
    return ids


async def _insert_org(conn: asyncpg.Connection[Any], org: Mapping[str, Any]) -> int:
    org_id: int = await conn.fetchval(
        """INSERT INTO core.accounts
               (kind, name, full_name, description, website, location, visibility)
           VALUES ('org', $1, $2, $3, $4, $5, $6) RETURNING id""",
        org["name"],
        org.get("full_name", ""),
        org.get("description", ""),
        org.get("website", ""),
        org.get("location", ""),
        org.get("visibility", "public"),
    )
    return org_id


async def _insert_member(
    conn: asyncpg.Connection[Any], org_id: int, user_id: int, member: Mapping[str, Any]
) -> None:
    await conn.execute(
        "INSERT INTO core.org_members (org_id, user_id, role, public) VALUES ($1, $2, $3, $4)",
        org_id,
        user_id,
        "owner" if member.get("owner") else "member",
        member.get("public", False),
    )
