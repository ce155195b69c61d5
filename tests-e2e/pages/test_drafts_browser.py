"""Pages follow the updaters and show publishers their work, in Chromium through nginx
(docs/pages.md "Latest on the pages", docs/console.md): a nightly `latest-build` published after
v1.1.0 is neither the repository page's latest nor its download; a publisher who is not an
administrator finds the drafts on the releases page (Draft badge, an edit link that opens the
form) and the repository page's links to the console and the insights; a reader sees neither."""

from __future__ import annotations

import re
from typing import Any

import pytest
from forge_testing.waiting import until

from ..conftest import Stack
from .test_pages_browser import browser

__all__ = ["browser"]  # the fixture, shared (test_pages_browser.py launches Chromium)

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

PASSWORDS = {"pia": "pia-publisher-pass", "ada": "ada-admin-pass", "rex": "rex-reader-pass"}
WORLD = {
    "users": [{"name": name, "password": password} for name, password in PASSWORDS.items()],
    "orgs": [{"name": "acme", "visibility": "public", "members": []}],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "collaborators": [
                {"user": "pia", "permission": "write"},
                {"user": "ada", "permission": "admin"},
                {"user": "rex", "permission": "read"},
            ],
            "releases": [
                {
                    "tag": "v1.1.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.1.0.AppImage", "content": "stable"}],
                },
                {
                    "tag": "latest-build",
                    "created_at": "2026-01-02T00:00:00Z",
                    "assets": [{"name": "App-nightly.AppImage", "content": "nightly"}],
                },
                {"tag": "v2.0.0", "draft": True, "created_at": "2026-01-03T00:00:00Z"},
            ],
        }
    ],
}


def _signed_in(stack: Stack, browser: Any, name: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(stack.base_url + "user/login?redirect_to=/acme/app")
    page.fill("#user_name", name)
    page.fill("#password", PASSWORDS[name])
    page.click("button[type=submit]:has-text('Sign in')")
    page.wait_for_url(re.compile(r"/acme/app$"))
    return page


def _console_links(page: Any) -> list[str]:
    return [text.strip() for text in page.locator("main a.console-link").all_inner_texts()]


def test_the_repository_page_offers_what_an_updater_is_offered(stack: Stack, browser: Any) -> None:
    page = browser.new_context().new_page()  # Chromium on Linux: the AppImage
    page.goto(f"{stack.base_url}acme/app")
    button = page.locator("a.button.download")
    assert button.get_attribute("href").endswith("/App-1.1.0.AppImage")
    latest = page.locator("main h3:has(.badge:text-is('Latest'))").inner_text()
    assert "v1.1.0" in latest and "latest-build" not in page.locator("main").inner_text()
    page.goto(f"{stack.base_url}acme/app/releases")
    badged = page.locator("article:has(.badge:text-is('Latest')) h2").all_inner_texts()
    assert len(badged) == 1 and badged[0].startswith("v1.1.0"), badged
    page.context.close()


def test_a_publisher_finds_drafts_console_and_insights(stack: Stack, browser: Any) -> None:
    page = _signed_in(stack, browser, "pia")
    assert _console_links(page) == ["New release", "Insights"]
    page.click("main a.console-link:has-text('Insights')")
    page.wait_for_url(re.compile(r"/acme/app/insights$"))
    assert page.locator("h1").inner_text() == "Insights"
    page.goto(f"{stack.base_url}acme/app/releases")
    draft = page.locator("article:has(.badge:text-is('Draft'))")
    assert draft.count() == 1 and "v2.0.0" in draft.locator("h2").inner_text()
    draft.locator("a.console-link:has-text('Edit draft')").click()
    page.wait_for_url(re.compile(r"/acme/app/releases/edit/v2\.0\.0$"))
    assert "Edit release v2.0.0" in page.locator("h1").inner_text()
    page.context.close()
    admin = _signed_in(stack, browser, "ada")
    assert _console_links(admin) == ["New release", "Insights", "Settings", "Audit log"]
    admin.context.close()


def test_a_reader_sees_no_draft_and_no_console(stack: Stack, browser: Any) -> None:
    page = _signed_in(stack, browser, "rex")
    assert _console_links(page) == []
    page.goto(f"{stack.base_url}acme/app/releases")
    assert page.locator(".badge:text-is('Draft')").count() == 0
    assert "v2.0.0" not in page.locator("main").inner_text()
    page.context.close()


def test_one_download_count_on_every_page_never_going_back(stack: Stack, browser: Any) -> None:
    """Three downloads, then the repository page reloaded in Chromium until it shows them: its
    count never goes back between reloads (it showed 1, 2, then 1 again), and it ends where the
    releases page and the API are, within the flush delay."""
    name = "App-1.1.0.AppImage"
    for _ in range(3):
        assert stack.get(f"/acme/app/releases/download/v1.1.0/{name}").status == 200
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()

    def shown(path: str) -> int:
        page.goto(stack.base_url + path)
        row = page.locator("main tr", has_text=name).first
        return int(row.locator("td.num").nth(1).inner_text())

    def api() -> int:
        release = stack.get("/api/v2/repos/acme/app/releases/v1.1.0").json()
        return int(next(a["download_count"] for a in release["assets"] if a["name"] == name))

    seen: list[int] = []

    def counted() -> bool:
        seen.append(shown("acme/app"))
        return seen[-1] >= 3 and seen[-1] == api()

    until(counted, 30, lambda: f"repository page counts {seen}, the API {api()}", 0.2)
    assert seen == sorted(seen), seen
    assert shown("acme/app/releases") == seen[-1] == shown("acme/app")
