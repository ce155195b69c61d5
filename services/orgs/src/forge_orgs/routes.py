"""The route table of the orgs service: the version-1 organization profile API (docs/orgs.md)."""

from __future__ import annotations

from aiohttp import web

from . import openapi
from .groups import handlers as groups
from .pages import handlers as pages
from .pins import handlers as pins
from .profile import handlers as profile

V1 = "/api/v1"
# An organization's page is `/{org}`; the names of top-level routes and prefixes are never orgs.
ORG_SEGMENT = (
    r"(?!(?:api|avatars|healthz|readyz|metrics|internal)\Z)[A-Za-z0-9][A-Za-z0-9._-]{0,38}"
)


def add_routes(app: web.Application) -> None:
    # Fixed paths before the {repo} pattern they share a prefix with; aiohttp also falls through
    # to the next resource on a method mismatch, so a repository named "groups" can be unpinned.
    app.router.add_routes(
        [
            web.get(f"{V1}/openapi.json", openapi.serve),
            web.get(f"{V1}/orgs/{{org}}/pinned", pins.list_pins),
            web.post(f"{V1}/orgs/{{org}}/pinned", pins.add_pin),
            web.put(f"{V1}/orgs/{{org}}/pinned/reorder", pins.reorder_pins),
            web.get(f"{V1}/orgs/{{org}}/pinned/groups", groups.list_groups),
            web.post(f"{V1}/orgs/{{org}}/pinned/groups", groups.create_group),
            web.put(f"{V1}/orgs/{{org}}/pinned/groups/{{id}}", groups.update_group),
            web.delete(f"{V1}/orgs/{{org}}/pinned/groups/{{id}}", groups.delete_group),
            web.delete(f"{V1}/orgs/{{org}}/pinned/{{repo}}", pins.remove_pin),
            web.get(f"{V1}/orgs/{{org}}/overview", profile.overview),
            web.get(f"{V1}/orgs/{{org}}/public_members/roles", profile.public_member_roles),
            web.put(f"{V1}/orgs/{{org}}/public_members/{{username}}", profile.publicize_member),
            web.delete(f"{V1}/orgs/{{org}}/public_members/{{username}}", profile.conceal_member),
        ]
    )
    # Pages (docs/pages.md), last: `/{org}` is one segment that is not a top-level route's name.
    app.router.add_routes(
        [
            web.get("/avatars/{name}", pages.avatar),
            web.get(f"/{{org:{ORG_SEGMENT}}}", pages.org_page),
        ]
    )
