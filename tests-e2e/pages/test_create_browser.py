"""Gitea's "New organization" and "New repository" pages in a real browser (docs/accounts.md "In
the browser"): Debian's Chromium, driven by Playwright, through nginx. A signed-in user follows
the header's links, creates an organization and a repository in it, and sees each one's page; a
taken name is said in the form; a cross-site post creates nothing; both forms are accessible."""

from __future__ import annotations

from typing import Any

import pytest

from ..conftest import Stack
from .test_pages_browser import _axe_violations, browser

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = pytest.mark.full


__all__ = ["browser"]  # the fixture, shared (test_pages_browser.py launches Chromium)

PASSWORD = "ada-browser-password"
WORLD = {
    "users": [
        {"name": "ada", "full_name": "Ada Lovelace", "password": PASSWORD},
        {"name": "eve", "password": "eve-browser-password"},
    ],
    "orgs": [
        {"name": "taken", "visibility": "public", "members": [{"user": "eve", "owner": True}]}
    ],
}
EVIL_PAGE = """<!doctype html><html><body>
<form id="f" method="post" action="{target}">
<input name="org_name" value="forged">
<input name="_csrf" value="guessed">
</form>
<script>document.getElementById('f').submit()</script>
</body></html>"""


def _sign_in(page: Any, stack: Stack, name: str, password: str) -> None:
    page.goto(stack.base_url + "user/login")
    page.fill("#user_name", name)
    page.fill("#password", password)
    with page.expect_navigation():
        page.click("button[type=submit]")


def test_a_user_creates_an_organization_and_a_repository_in_the_browser(
    stack: Stack, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    _sign_in(page, stack, "ada", PASSWORD)
    problems: list[str] = []

    with page.expect_navigation():
        page.click("nav.account a:has-text('New organization')")
    assert page.url == stack.base_url + "org/create"
    problems += [f"org/create: {v}" for v in _axe_violations(page)]
    page.fill("#org_name", "taken")  # another's name: said in the form, nothing made
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.url == stack.base_url + "org/create"
    assert page.locator("[role=alert]").inner_text() != ""
    page.fill("#org_name", "beta")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.url == stack.base_url + "beta"
    assert "beta" in page.locator("h1").inner_text()

    with page.expect_navigation():
        page.click("nav.account a:has-text('New repository')")
    assert page.url == stack.base_url + "repo/create"
    problems += [f"repo/create: {v}" for v in _axe_violations(page)]
    owners = page.locator("#uid option").all_inner_texts()
    assert owners == ["ada", "beta"]  # not `taken`, which ada does not own
    page.select_option("#uid", label="beta")
    page.fill("#repo_name", "tool")
    page.fill("#description", "The tool")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.url == stack.base_url + "beta/tool"
    assert stack.get("/api/v1/repos/beta/tool").status == 200
    assert problems == []
    context.close()


def test_a_cross_site_post_creates_no_organization(stack: Stack, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    _sign_in(page, stack, "eve", "eve-browser-password")
    target = stack.base_url + "org/create"
    context.route(
        "http://evil.test/**",
        lambda route: route.fulfill(
            status=200, content_type="text/html", body=EVIL_PAGE.format(target=target)
        ),
    )
    page.goto("http://evil.test/")
    page.wait_for_url(stack.base_url + "**")
    assert stack.get("/api/v1/orgs/forged").status == 404
    # and a same-site post without the form's CSRF token is refused as well
    reply = page.request.post(target, form={"org_name": "forged"})
    assert reply.status == 403
    assert stack.get("/api/v1/orgs/forged").status == 404
    context.close()
