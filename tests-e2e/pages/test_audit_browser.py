"""The audit log's console page in Chromium through nginx (docs/audit.md "In the console"): a
repository's admin follows the console link from the repository's page, reads who changed what
(the withdrawal with its reason), filters by kind and actor with the page's form and pages back;
the page is accessible at both widths and runs no script; a reader gets no link and the same 404
as the API gives, and so does an anonymous visitor."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ..conftest import Stack
from .test_console_browser import check_page
from .test_pages_browser import WIDTHS, browser

__all__ = ["browser"]  # the fixture, shared (test_pages_browser.py launches Chromium)

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

PASSWORDS = {"ada": "ada-audit-admin-pass", "rex": "rex-audit-reader-pass"}
WORLD = {
    "users": [
        {"name": name, "password": password, "tokens": [f"{name}-audit-token"]}
        for name, password in PASSWORDS.items()
    ],
    "repos": [
        {
            "owner": "ada",
            "name": "ledger",
            "collaborators": [{"user": "rex", "permission": "read"}],
            "releases": [],
        }
    ],
}
LEDGER = "ada/ledger"
ADA = {"Authorization": "token ada-audit-token", "Content-Type": "application/json"}


def _signed_in(stack: Stack, browser: Any, name: str) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(stack.base_url + f"user/login?redirect_to=/{LEDGER}")
    page.fill("#user_name", name)
    page.fill("#password", PASSWORDS[name])
    page.click("button[type=submit]:has-text('Sign in')")
    page.wait_for_url(re.compile(f"/{LEDGER}$"))
    return page


def _history(stack: Stack) -> None:
    """Three releases published through the API, the last withdrawn with a reason."""
    api = f"/api/v2/repos/{LEDGER}/releases"
    for tag in ("v1.0.0", "v1.1.0", "v1.2.0"):
        made = stack.request("POST", api, ADA, json.dumps({"tag_name": tag}).encode())
        assert made.status == 201, made.body
    rid = made.json()["id"]
    body = json.dumps({"withdrawn": True, "withdrawn_reason": "corrupts the ledger"}).encode()
    assert stack.request("PATCH", f"{api}/{rid}", ADA, body).status == 200


def _rows(page: Any) -> list[tuple[str, str, str]]:
    rows = page.locator("#audit-entries tbody tr")
    return [
        (
            rows.nth(i).locator("td.actor").inner_text(),
            rows.nth(i).locator("td.kind").inner_text(),
            rows.nth(i).locator("td.target").inner_text(),
        )
        for i in range(rows.count())
    ]


def test_an_admin_reads_filters_and_pages_the_log(stack: Stack, browser: Any) -> None:
    _history(stack)
    page = _signed_in(stack, browser, "ada")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.click("a.console-link:has-text('Audit log')")
    page.wait_for_url(re.compile(f"/{LEDGER}/audit$"))
    assert _rows(page)[0] == ("ada", "release.withdrawn", f"{LEDGER}@v1.2.0")
    assert "corrupts the ledger" in page.locator("#audit-entries tbody tr").first.inner_text()
    assert page.locator("#audit-total").inner_text().startswith("7 entries")
    problems: list[str] = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        problems += check_page(page, "audit", width)
    page.set_viewport_size({"width": 1280, "height": 900})

    page.fill("#kind", "release.published")
    page.fill("#actor", "ADA")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r"/audit\?kind=release\.published&actor=ADA$"))
    assert [kind for _, kind, _ in _rows(page)] == ["release.published"] * 3
    assert page.input_value("#kind") == "release.published"

    page.goto(f"{stack.base_url}{LEDGER}/audit?kind=release&limit=2")
    first = _rows(page)
    page.click("a:has-text('Older entries')")
    page.wait_for_url(re.compile(r"page=2"))
    second = _rows(page)
    assert len(first) == len(second) == 2 and not set(first) & set(second)
    assert page.locator("#audit-total").inner_text() == "7 entries matching, page 2 of 4."
    page.click("a:has-text('Newer entries')")
    page.wait_for_url(re.compile(r"page=1"))
    assert _rows(page) == first
    assert errors == [] and problems == [], (errors, problems)
    page.context.close()


def test_a_reader_and_a_visitor_get_the_apis_404(stack: Stack, browser: Any) -> None:
    if not stack.get(f"/api/v2/repos/{LEDGER}/audit", ADA).json():
        _history(stack)  # run alone: the log has entries, so there is something not to leak
    reader = _signed_in(stack, browser, "rex")
    assert reader.locator("a:has-text('Audit log')").count() == 0
    missing = reader.goto(f"{stack.base_url}ada/no-such-repo/audit")
    assert missing is not None and missing.status == 404
    nowhere = reader.locator("main").inner_text()
    reply = reader.goto(f"{stack.base_url}{LEDGER}/audit")
    assert reply is not None and reply.status == 404
    assert reader.locator("main").inner_text() == nowhere.replace("no-such-repo", "ledger")
    shown = reader.content()
    assert "release.withdrawn" not in shown and "corrupts the ledger" not in shown
    api = stack.get(f"/api/v2/repos/{LEDGER}/audit", {"Authorization": "token rex-audit-token"})
    assert api.status == 404
    reader.context.close()
    visitor = browser.new_context().new_page()
    reply = visitor.goto(f"{stack.base_url}{LEDGER}/audit")
    anonymous = stack.get(f"/api/v2/repos/{LEDGER}/audit")
    assert reply is not None and reply.status == 404 == anonymous.status
    visitor.context.close()
