"""Wire objects (docs/http.md "Wire names"): snake_case names that Gitea and GitHub clients read.

Addresses are built from `app_url` (which ends in '/'); names are percent-encoded segments.
Avatars live at `{app_url}avatars/{name}`, one predictable address (docs/orgs.md "Decisions").
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from .models import Group, Member, Org, Pin, PinnedRepo, Stats

JSON = dict[str, Any]

# "Rendered as if the viewer had read permission" (docs/orgs.md "Decisions"): every viewer gets
# the same read-only permissions object, so the embedded repository never reveals a viewer's
# write or admin rights and the object is the same for everyone who may see the pin.
READ_PERMISSIONS = {"admin": False, "push": False, "pull": True}


_PLAIN = re.compile(r"[A-Za-z0-9._-]+")


def _segment(name: str) -> str:
    # account and repository names are patterned to need no encoding: skip quote()'s cost
    return name if _PLAIN.fullmatch(name) else quote(name, safe="")


def user(base: str, user_id: int, login: str, full_name: str) -> JSON:
    return {
        "id": user_id,
        "login": login,
        "full_name": full_name,
        "avatar_url": f"{base}avatars/{_segment(login)}",
        "html_url": f"{base}{_segment(login)}",
    }


def organization(base: str, org: Org) -> JSON:
    return {
        "id": org.id,
        "name": org.name,
        "full_name": org.full_name,
        "description": org.description,
        "website": org.website,
        "location": org.location,
        "avatar_url": f"{base}avatars/{_segment(org.name)}",
        "visibility": org.visibility,
    }


def repository(base: str, org: Org, repo: PinnedRepo, owner: JSON | None = None) -> JSON:
    return {
        "id": repo.id,
        "owner": owner or user(base, org.id, org.name, org.full_name),
        "name": repo.name,
        "full_name": f"{org.name}/{repo.name}",
        "description": repo.description,
        "private": repo.private,
        "archived": repo.archived,
        "html_url": f"{base}{_segment(org.name)}/{_segment(repo.name)}",
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
        "permissions": dict(READ_PERMISSIONS),
    }


def group(g: Group) -> JSON:
    return {"id": g.id, "name": g.name, "display_order": g.display_order, "collapsed": g.collapsed}


def pin(base: str, org: Org, p: Pin, owner: JSON | None = None) -> JSON:
    body: JSON = {
        "id": p.id,
        "repo_id": p.repo_id,
        "group_id": p.group_id or 0,  # 0 means no group (docs/orgs.md "Objects")
        "display_order": p.display_order,
        "repo": repository(base, org, p.repo, owner),
    }
    if p.group is not None:
        body["group"] = group(p.group)
    return body


def pins(base: str, org: Org, items: list[Pin]) -> list[JSON]:
    """Pins sharing one owner object (the same for every pin; built once, not per pin)."""
    owner = user(base, org.id, org.name, org.full_name)
    return [pin(base, org, p, owner) for p in items]


def public_member(base: str, m: Member) -> JSON:
    return {"user": user(base, m.id, m.login, m.full_name), "role": m.role}


def stats(s: Stats, readable_repo_count: int, *, is_member: bool) -> JSON:
    """Counts a viewer may learn: non-members (site admins too) see public members only and no
    teams (docs/orgs.md "Decisions")."""
    return {
        "member_count": s.member_count if is_member else s.public_member_count,
        "repo_count": readable_repo_count,
        "public_repo_count": s.public_repo_count,
        "team_count": s.team_count if is_member else 0,
    }
