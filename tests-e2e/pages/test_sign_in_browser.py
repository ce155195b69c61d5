"""Sign-in in a real browser (docs/accounts.md): Debian's Chromium, driven by Playwright, against
the three services behind nginx. A member signs in from the 401 page of a private release and
lands back on it, makes a token on the settings page and publishes with it through
`forge release publish`, signs out and loses the page; a cross-site form post is refused; axe-core
finds no serious or critical violation on the sign-in, settings, start and profile pages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Stack
from .test_pages_browser import OUTPUT, _axe_violations, browser

__all__ = ["browser"]  # the fixture, shared (test_pages_browser.py launches Chromium)

PASSWORD = "bob-browser-password"
WORLD = {
    "users": [
        {"name": "bob", "full_name": "Bob Builder", "password": PASSWORD},
        {"name": "eve", "password": "eve-browser-password"},
    ],
    "orgs": [
        {
            "name": "acme",
            "full_name": "Acme Corporation",
            "visibility": "public",
            "members": [{"user": "bob", "owner": True, "public": True}],
        }
    ],
    "repos": [
        {"owner": "acme", "name": "app", "releases": [{"tag": "v1.0.0"}]},
        {
            "owner": "acme",
            "name": "vault",
            "private": True,
            "description": "Confidential vault",
            "releases": [{"tag": "v7.7.7", "title": "Vault 7.7.7"}],
        },
    ],
}
PRIVATE_RELEASE = "acme/vault/releases/tag/v7.7.7"


def _sign_in(page: Any, stack: Stack, name: str, password: str) -> None:
    page.goto(stack.base_url + "user/login")
    page.fill("#user_name", name)
    page.fill("#password", password)
    with page.expect_navigation():
        page.click("button[type=submit]")


def _publish(stack: Stack, token: str, tag: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    asset = tmp / "App-8.0.0-x64.zip"
    asset.write_bytes(b"zip bytes" * 100)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    env.update({"FORGE_URL": stack.base_url, "FORGE_TOKEN": token})
    argv = [sys.executable, "-m", "forge_common.cli", "release", "publish", "acme/vault", tag]
    return subprocess.run(
        [*argv, str(asset)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_sign_in_see_a_private_release_publish_with_a_new_token_and_sign_out(
    stack: Stack, browser: Any, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    # anonymous: the 401 page links to the sign-in, which returns here
    reply = page.goto(stack.base_url + PRIVATE_RELEASE)
    assert reply is not None and reply.status == 401
    assert "Vault 7.7.7" not in page.content()
    with page.expect_navigation():
        page.click("main a:has-text('Sign in')")
    assert page.url.endswith("/user/login?redirect_to=/" + PRIVATE_RELEASE)
    page.fill("#user_name", "bob")
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert page.url == stack.base_url + PRIVATE_RELEASE
    assert page.locator("h1").inner_text().startswith("Vault 7.7.7")  # then the Latest badge
    assert page.locator("nav.account a.who").inner_text() == "bob"
    # the session cookie is HttpOnly: no script of any page could read it
    cookies = {c["name"]: c for c in context.cookies()}
    assert cookies["forge_session"]["httpOnly"] and cookies["forge_session"]["sameSite"] == "Lax"
    assert page.evaluate("document.cookie") == ""

    # a token made on the settings page, shown once, publishes through `forge release publish`
    page.goto(stack.base_url + "user/settings/applications")
    page.fill("#token-name", "ci")
    page.check("input[value='write:repository']")
    with page.expect_navigation():
        page.click("button:has-text('Create token')")
    token = page.locator("#new-token").inner_text()
    assert len(token) == 40
    published = _publish(stack, token, "v8.0.0", tmp_path)
    assert published.returncode == 0, published.stderr
    page.goto(stack.base_url + "acme/vault/releases/tag/v8.0.0")
    assert page.locator("h1").inner_text().startswith("v8.0.0")
    page.goto(stack.base_url + "user/settings/applications")
    assert token not in page.content() and token[-8:] in page.content()

    # sign out: the session ends on the server, and the private page is gone
    with page.expect_navigation():
        page.click("form.signout button")
    assert page.url == stack.base_url
    reply = page.goto(stack.base_url + PRIVATE_RELEASE)
    assert reply is not None and reply.status == 401
    context.close()


EVIL_PAGE = """<!doctype html><html><body>
<form id="f" method="post" action="{target}">
<input name="name" value="forged"><input name="scope" value="all">
<input name="_csrf" value="guessed">
</form>
<script>document.getElementById('f').submit()</script>
</body></html>"""


@pytest.mark.parametrize("path", ["user/settings/applications", "user/logout"])
def test_a_forged_cross_site_form_post_is_refused(stack: Stack, browser: Any, path: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    _sign_in(page, stack, "eve", "eve-browser-password")
    assert page.locator("nav.account a.who").inner_text() == "eve"
    target = stack.base_url + path
    context.route(
        "http://evil.test/**",
        lambda route: route.fulfill(
            status=200, content_type="text/html", body=EVIL_PAGE.format(target=target)
        ),
    )
    page.goto("http://evil.test/")
    # the form posts itself to us; the browser sends no session cookie with another site's post
    # (SameSite=Lax), so the settings form is 401 and the sign-out ends nothing (a 303 home)
    page.wait_for_url(stack.base_url + "**")
    # still signed in, and no token was made
    page.goto(stack.base_url + "user/settings/applications")
    assert page.locator("nav.account a.who").inner_text() == "eve"
    assert "forged" not in page.locator("main").inner_text()
    context.close()


def test_sign_in_settings_start_and_profile_pages_are_accessible(
    stack: Stack, browser: Any
) -> None:
    OUTPUT.mkdir(exist_ok=True)
    problems: list[str] = []
    for width in (1280, 360):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
        anonymous = {"sign-in": "user/login", "start": "", "profile": "bob"}
        for name, path in anonymous.items():
            reply = page.goto(stack.base_url + path)
            assert reply is not None and reply.status == 200, name
            problems += [f"{name}@{width}: {v}" for v in _axe_violations(page)]
            assert page.evaluate("document.documentElement.scrollWidth") <= width, name
            page.screenshot(path=str(OUTPUT / f"{name}-{width}.png"), full_page=True)
        _sign_in(page, stack, "bob", PASSWORD)
        signed_in = {
            "start-signed-in": "",
            "settings-tokens": "user/settings/applications",
            "settings-password": "user/settings/account",
        }
        for name, path in signed_in.items():
            reply = page.goto(stack.base_url + path)
            assert reply is not None and reply.status == 200, name
            problems += [f"{name}@{width}: {v}" for v in _axe_violations(page)]
            assert page.evaluate("document.documentElement.scrollWidth") <= width, name
            page.screenshot(path=str(OUTPUT / f"{name}-{width}.png"), full_page=True)
        start = page.goto(stack.base_url)
        assert start is not None and "acme/vault" in start.text()  # your repositories
        context.close()
        assert errors == [], errors
    assert problems == [], problems
