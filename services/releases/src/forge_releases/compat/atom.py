"""GET /{owner}/{repo}/releases.atom: GitHub's release feed, which electron-updater's GitHub
provider reads to find releases (each entry's `link` ends in `/releases/tag/{tag}`).

The newest releases first, prereleases included (as GitHub's feed), drafts never: the feed is for
everyone who may read the repository, under the same access rules as the API.
"""

from __future__ import annotations

from datetime import UTC, datetime
from xml.etree import ElementTree as ET

from aiohttp import web
from forge_common.keys import SETTINGS

from ..httpcache import cache_headers
from ..models import Release, RepoRef
from ..read.handlers import list_page
from ..read.resolve import resolve
from ..urls import release_page_url, repo_url

ATOM = "http://www.w3.org/2005/Atom"
FEED_SIZE = "10"  # GitHub's feed holds the newest ten


def _text(parent: ET.Element, name: str, text: str, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, name, attrs)
    element.text = text
    return element


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def feed(app_url: str, ref: RepoRef, releases: list[Release]) -> bytes:
    home = repo_url(app_url, ref.owner, ref.name)
    root = ET.Element("feed", {"xmlns": ATOM, "xml:lang": "en-US"})
    _text(root, "id", f"tag:{ref.owner},repository:{ref.repo_id}:releases")
    ET.SubElement(root, "link", {"type": "text/html", "rel": "alternate", "href": home})
    ET.SubElement(
        root,
        "link",
        {"type": "application/atom+xml", "rel": "self", "href": f"{home}/releases.atom"},
    )
    _text(root, "title", f"Release notes from {ref.name}")
    newest = releases[0].created_at if releases else datetime(1970, 1, 1, tzinfo=UTC)
    _text(root, "updated", _stamp(newest))
    for release in releases:
        entry = ET.SubElement(root, "entry")
        _text(entry, "id", f"tag:{ref.owner},repository:{ref.repo_id}:release:{release.id}")
        _text(entry, "updated", _stamp(release.created_at))
        page = release_page_url(app_url, ref.owner, ref.name, release.tag)
        ET.SubElement(entry, "link", {"rel": "alternate", "type": "text/html", "href": page})
        _text(entry, "title", release.title or release.tag)
        _text(entry, "content", release.note, type="text")
        author = ET.SubElement(entry, "author")
        _text(author, "name", ref.owner)
    text = ET.tostring(root, encoding="unicode")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + text.encode()


async def releases_atom(request: web.Request) -> web.Response:
    resolved = await resolve(request)
    query = {"page": "1", "limit": FEED_SIZE, "prereleases": "true"}
    listing = await list_page(request, resolved, query=query)
    body = feed(request.app[SETTINGS].app_url, resolved.ref, listing.releases)
    return web.Response(
        body=body,
        content_type="application/atom+xml",
        charset="utf-8",
        headers=cache_headers(resolved.public),
    )
