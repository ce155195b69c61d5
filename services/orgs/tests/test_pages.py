"""The organization page and avatars (docs/pages.md): the page shows what the overview API shows
the same viewer, never more, and its errors are HTML pages with the API's status codes."""

from __future__ import annotations

import re

import pytest

from .conftest import TOKENS
from .test_privacy import ORGS, SEES_ORG


async def _page(ro_api, path: str, viewer: str = "anonymous"):
    headers = {} if viewer == "anonymous" else {"Authorization": f"token {TOKENS[viewer]}"}
    reply = await ro_api.client.get(path, headers=headers)
    text = await reply.text()
    # the content without the stylesheet (whose words, like "text-decoration", would match) and
    # the site header (its sign-in link returns to the path asked for, whatever it names)
    return reply.status, reply.headers, text.split("</header>")[-1], text


def _pins(html: str) -> list[str]:
    return re.findall(r'<h3><a href="[^"]+/(\w+)">', html)


@pytest.mark.parametrize("org", list(ORGS))
@pytest.mark.parametrize("viewer", ["anonymous", "stranger", "owner"])
async def test_org_page_shows_what_the_overview_shows(ro_api, org, viewer):
    status, headers, html, full = await _page(ro_api, f"/{org}", viewer)
    if viewer not in SEES_ORG[ORGS[org]]:
        assert status == 404
        assert headers["Content-Type"].startswith("text/html")
        assert "<title>404 Organization not found" in full and f"/{org}" not in html
        return
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "script" not in headers["Content-Security-Policy"].replace("default-src", "")
    expected = ["open", "secret", "loose"] if viewer == "owner" else ["open", "loose"]
    # ungrouped pins first, then groups in order; a collapsed group renders closed
    assert sorted(_pins(html)) == sorted(expected)
    assert "secret" in html if viewer == "owner" else "secret" not in html
    assert "Hidden" in html if viewer == "owner" else "Hidden" not in html
    assert re.search(r"<details class=\"pin-group\" open>\s*<summary>Featured", html)
    assert "cora" not in html  # a concealed member never shows
    assert "mia" in html and "olive" in html
    assert f'<meta property="og:url" content="http://forge.test/{org}">' in full
    assert html.count("<h1") == 1


async def test_collapsed_group_is_closed(ro_api):
    _, _, html, _ = await _page(ro_api, "/pub", "owner")
    assert re.search(r"<details class=\"pin-group\">\s*<summary>Hidden", html)


async def test_reserved_top_level_names_are_not_org_pages(ro_api):
    for path in ("/healthz",):
        reply = await ro_api.client.get(path)
        assert reply.status == 200 and "json" in reply.headers["Content-Type"]
    reply = await ro_api.client.get("/api")
    assert reply.status == 404 and "json" in reply.headers["Content-Type"]


async def test_avatar_is_a_long_cached_svg_for_any_valid_name(ro_api):
    first = await ro_api.client.get("/avatars/priv")
    assert first.status == 200 and first.headers["Content-Type"] == "image/svg+xml"
    assert "max-age=31536000" in first.headers["Cache-Control"]
    svg = await first.text()
    assert svg.startswith("<svg") and ">PR<" in svg and "<script" not in svg
    # the same for a name nobody has: an avatar says nothing about who exists
    assert (await ro_api.client.get("/avatars/nobody-here")).status == 200
    digits = await (await ro_api.client.get("/avatars/1234")).text()
    assert "<rect" in digits and "<text" not in digits  # an identicon
    again = await ro_api.client.get(
        "/avatars/priv", headers={"If-None-Match": first.headers["ETag"]}
    )
    assert again.status == 304
    assert (await ro_api.client.get("/avatars/..bad")).status == 404


async def test_org_page_revalidates_with_its_etag(ro_api):
    first = await ro_api.client.get("/pub")
    again = await ro_api.client.get("/pub", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status == 304 and again.headers["Cache-Control"].startswith("private")
    # another viewer sees another overview: another page, another tag
    owner = await ro_api.client.get("/pub", headers={"Authorization": f"token {TOKENS['owner']}"})
    assert owner.headers["ETag"] != first.headers["ETag"]


async def test_a_website_is_a_link_only_when_it_is_http(api, load):
    await load(
        {
            "orgs": [
                {"name": "evil", "website": "javascript:alert(1)", "visibility": "public"},
                {"name": "good", "website": "https://good.example", "visibility": "public"},
            ]
        }
    )
    evil = await (await api.client.get("/evil")).text()
    assert 'href="javascript:' not in evil and "javascript:alert(1)" in evil  # shown as text
    good = await (await api.client.get("/good")).text()
    assert '<a href="https://good.example" rel="nofollow noopener noreferrer">' in good
