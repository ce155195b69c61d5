"""GET /{org} (the organization profile page; a user's profile for a user's name) and
GET /avatars/{name}.

The page is the overview API's answer (overview.prepared_overview: the same query, access
rules and cache per viewer class) laid out as HTML, so it shows exactly what that API call would,
never more.
"""

from __future__ import annotations

import hashlib
from typing import Any

import aiohttp_jinja2
import orjson
from aiohttp import web
from forge_common.accounts.sessions import session_of
from forge_common.auth import viewer_of
from forge_common.conditional import none_match, not_modified, quoted
from forge_common.errors import NotFound
from forge_common.names import is_account_name
from forge_common.pages import html_errors, page, page_context, page_headers

from ..errors import OrgNotFound
from ..http import base_url
from ..models import OrgView
from ..overview.prepared import prepared_overview
from .avatar import avatar_svg
from .profile import user_page

# An avatar depends on the name alone and never changes: cacheable for a year by anyone.
AVATAR_HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
}


def _web_link(url: str) -> str | None:
    """A website shown as a link only when it is http(s): never a javascript: or data: URL."""
    return url if url.lower().startswith(("https://", "http://")) else None


def _sections(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Pins without a group first, then each group in order with its pins in order."""
    groups = [{"group": g, "pins": []} for g in body["pinned_groups"]]
    by_id = {g["group"]["id"]: g for g in groups}
    loose: list[dict[str, Any]] = []
    for pin in body["pinned_repos"]:
        section = by_id.get(pin["group_id"])
        (section["pins"] if section else loose).append(pin)
    return [{"group": None, "pins": loose}, *groups] if loose else groups


class RenderedPages:
    """Organization pages already rendered, by a digest of the overview they show: rendering
    costs as much as the overview query, and most views show an unchanged overview. Bounded;
    cleared when full (cheap, and rare)."""

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self.pages: dict[str, bytes] = {}

    def put(self, key: str, html: bytes) -> None:
        if len(self.pages) >= self.limit:
            self.pages.clear()
        self.pages[key] = html


RENDERED = web.AppKey("forge_orgs_rendered_pages", RenderedPages)


@page
async def org_page(request: web.Request) -> web.StreamResponse:
    # The overview API's body, as bytes: the page is a function of it alone, so its digest names
    # the page and its ETag, and it is parsed only to render a page not rendered yet.
    viewer = viewer_of(request)
    name = request.match_info["org"]
    try:
        prepared = await prepared_overview(request.app, name, viewer)
    except OrgNotFound:
        profile = await user_page(request, name)  # a user's name: their profile
        if profile is None:
            raise
        return profile
    overview = prepared.json
    # the console's link, for those who may manage the pins (docs/console.md "Pins")
    manage = OrgView(prepared.data.org, viewer, prepared.data.role).can_manage
    # a signed-in browser's page names them in its header (and carries their sign-out token)
    session = session_of(request)
    salt = (session.secret.encode() if session else b"") + (b"manage" if manage else b"")
    digest = hashlib.blake2b(overview + salt, digest_size=16).hexdigest()
    headers = {**page_headers(request), "ETag": quoted(digest)}
    if none_match(request, headers["ETag"]):
        return not_modified(headers["ETag"], headers)
    rendered = request.app[RENDERED]
    html = rendered.pages.get(digest)
    if html is None:
        html = _render_page(request, orjson.loads(overview), manage)
        rendered.put(digest, html)
    return web.Response(body=html, content_type="text/html", headers=headers)


def _render_page(request: web.Request, body: dict[str, Any], manage: bool) -> bytes:
    org = body["organization"]
    context = {
        **page_context(request),
        **body,
        "org": org,
        "manage_pins": manage,
        "website": _web_link(org["website"]),
        "sections": _sections(body),
        "og_url": f"{base_url(request)}{org['name']}",
        "og_description": org["description"] or f"{org['full_name'] or org['name']} on Forge",
        "og_image": org["avatar_url"],
    }
    return aiohttp_jinja2.render_string("orgs/org.html", request, context).encode()


@html_errors
async def avatar(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if not is_account_name(name):
        raise NotFound("Not found")
    etag = quoted(hashlib.blake2b(f"v1:{name.lower()}".encode(), digest_size=8).hexdigest())
    if none_match(request, etag):
        return not_modified(etag, AVATAR_HEADERS)
    return web.Response(
        body=avatar_svg(name),
        content_type="image/svg+xml",
        headers={**AVATAR_HEADERS, "ETag": etag},
    )
