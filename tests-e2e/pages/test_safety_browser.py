"""Release safety in the console, in Chromium through nginx (docs/release-safety.md "In the
console"): a publisher withdraws a release after a confirmation that says which updaters roll
installs back, and Squirrel.Mac's answer rolls an install on it back; marks a release critical
and the answer below it says mandatory; each change is in the audit log with the source `console`;
a form posted without its CSRF token changes nothing; a reader sees the withdrawn release's page
with the reason, and no console."""

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

PASSWORDS = {"sam": "sam-publisher-pass", "rex": "rex-reader-pass"}
WORLD = {
    "users": [
        {"name": name, "password": password, "tokens": [f"{name}-safety-token"]}
        for name, password in PASSWORDS.items()
    ],
    "repos": [
        {
            "owner": "sam",
            "name": "desk",
            "collaborators": [{"user": "rex", "permission": "read"}],
            "releases": [
                {
                    "tag": f"v{version}",
                    "created_at": f"2026-01-0{day}T00:00:00Z",
                    "assets": [{"name": f"Desk-{version}-mac.zip", "content": version}],
                }
                for day, version in enumerate(("1.0.0", "1.1.0", "1.2.0"), 1)
            ],
        }
    ],
}
DESK = "sam/desk"
SAM = {"Authorization": "token sam-safety-token"}


def _signed_in(stack: Stack, browser: Any, name: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(stack.base_url + f"user/login?redirect_to=/{DESK}")
    page.fill("#user_name", name)
    page.fill("#password", PASSWORDS[name])
    page.click("button[type=submit]:has-text('Sign in')")
    page.wait_for_url(re.compile(f"/{DESK}$"))
    return page


def _mac(stack: Stack, version: str) -> Any:
    reply = stack.get(f"/{DESK}/darwin-x64/{version}")
    return reply.json() if reply.status == 200 else None


def _audit(stack: Stack, kind: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = stack.get(f"/api/v2/repos/{DESK}/audit?kind={kind}", SAM).json()
    return entries


def test_a_publisher_withdraws_and_marks_critical_in_the_browser(
    stack: Stack, browser: Any
) -> None:
    page = _signed_in(stack, browser, "sam")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    assert _mac(stack, "1.1.0")["name"] == "v1.2.0"

    # a form posted without its CSRF token is refused and changes nothing
    forged = page.request.post(
        f"{stack.base_url}{DESK}/releases/edit/v1.2.0/withdraw",
        form={"reason": "forged"},
        headers={"Origin": stack.base_url.rstrip("/")},
        max_redirects=0,
    )
    assert forged.status == 403
    assert _audit(stack, "release.withdrawn") == []

    page.goto(f"{stack.base_url}{DESK}/releases/edit/v1.2.0")
    page.click("a:has-text('Withdraw this release')")
    page.wait_for_url(re.compile(r"/releases/edit/v1\.2\.0/withdraw$"))
    rolls_back = page.locator("#rolls-back").inner_text()
    assert "Squirrel.Mac" in rolls_back and "rolls back" in rolls_back
    assert page.locator("main strong:has-text('v1.1.0')").is_visible()  # offered instead
    page.fill("#reason", "crashes on start")
    page.click("button:has-text('Withdraw v1.2.0')")
    page.wait_for_url(re.compile(r"/releases/edit/v1\.2\.0\?done=withdrawn$"))
    assert page.locator("p.notice").inner_text() == "Release withdrawn."
    assert "crashes on start" in page.locator("#withdrawn-state").inner_text()
    # Squirrel.Mac installs what it is given: an install on 1.2.0 goes back to 1.1.0
    until(lambda: (_mac(stack, "1.2.0") or {}).get("name") == "v1.1.0", 2, "the roll back")
    [entry] = _audit(stack, "release.withdrawn")
    assert (entry["actor"], entry["source"]) == ("sam", "console")
    assert entry["changes"]["withdrawn_reason"]["after"] == "crashes on start"

    # critical: the minimum version; below it the answer says mandatory
    page.goto(f"{stack.base_url}{DESK}/releases/edit/v1.1.0")
    page.check("#critical")
    page.click("button:has-text('Save safety')")
    page.wait_for_url(re.compile(r"/releases/edit/v1\.1\.0\?done=safety$"))
    assert page.locator("#critical").is_checked()
    assert "1.1.0" in page.locator("#minimum").inner_text()
    until(lambda: (_mac(stack, "1.0.0") or {}).get("mandatory") is True, 2, "mandatory")
    [critical] = _audit(stack, "release.critical")
    assert (critical["source"], critical["changes"]) == (
        "console",
        {"critical": {"before": False, "after": True}},
    )
    assert errors == [], errors
    page.context.close()

    # a reader: the withdrawn release's page says so, with the reason; no console, no log
    reader = _signed_in(stack, browser, "rex")
    reader.goto(f"{stack.base_url}{DESK}/releases/tag/v1.2.0")
    shown = reader.locator("p.withdrawn").inner_text()
    assert "Withdrawn" in shown and "crashes on start" in shown
    assert reader.locator("a.console-link").count() == 0
    reply = reader.goto(f"{stack.base_url}{DESK}/releases/edit/v1.2.0/withdraw")
    assert reply is not None and reply.status == 403
    audit = stack.get(f"/api/v2/repos/{DESK}/audit", {"Authorization": "token rex-safety-token"})
    assert audit.status == 404
    reader.context.close()
