"""The insights page in Chromium (docs/insights.md "Page"), through nginx: checks counted through
the proxy show in the chart's table fallback as the browser reads it; no console error, no
script, axe-core finds no serious or critical violation at 1280 and 360 px; an anonymous
visitor gets the 404 page."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from ..conftest import Stack
from .test_pages_browser import _axe_violations, browser

__all__ = ["browser"]  # the fixture, shared

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

TOKEN = "insights-pages-owner-token"
WORLD = {
    "users": [{"name": "dana", "tokens": [TOKEN]}],
    "repos": [
        {
            "owner": "dana",
            "name": "app",
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0-arm64.zip", "size": 100}],
                },
                {
                    "tag": "v1.1.0",
                    "created_at": "2026-01-02T00:00:00Z",
                    "assets": [{"name": "App-1.1.0-arm64.zip", "size": 100}],
                },
            ],
        }
    ],
}
CHECKS = {
    "/api/v2/repos/dana/app/releases/update?version=1.0.0&platform=darwin&arch=arm64": 7,
    "/api/v2/repos/dana/app/releases/update?version=1.1.0&platform=darwin&arch=arm64": 3,
}
OWNER = {"Authorization": f"token {TOKEN}"}


# every visible text of the charts: its font size times the SVG's scale on the screen (the
# length of the transform's first column: a rotated label is as large as a level one)
_TEXT_SIZES = """() => [...document.querySelectorAll('svg[role=img] text')]
  .filter(t => t.getClientRects().length > 0 && t.textContent.trim() !== '')
  .map(t => [parseFloat(getComputedStyle(t).fontSize)
               * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b),  // rotated labels too
             (t.parentNode.getAttribute('class') || '') + ' ' + (t.getAttribute('class') || '')
             + ': ' + t.textContent.trim().slice(0, 20)])"""


def _counted(stack: Stack) -> dict[str, int]:
    reply = stack.get("/api/v2/repos/dana/app/insights", OWNER)
    assert reply.status == 200, reply.body
    return {s["value"]: s["total"] for s in json.loads(reply.body)["checks"]["series"]}


def test_insights_page_table_and_accessibility(stack: Stack, browser: Any) -> None:
    for path, n in CHECKS.items():
        for _ in range(n):
            assert stack.get(path).status in (200, 204)
    deadline = time.monotonic() + 30
    while _counted(stack) != {"1.0.0": 7, "1.1.0": 3}:
        assert time.monotonic() < deadline, _counted(stack)
        time.sleep(0.2)

    today = datetime.now(UTC).date().isoformat()
    problems: list[str] = []
    for width in (1280, 390, 360):
        # the viewer as pages find it today: the Authorization header
        context = browser.new_context(
            viewport={"width": width, "height": 900}, extra_http_headers=OWNER
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
        reply = page.goto(f"{stack.base_url}dana/app/insights")
        assert reply is not None and reply.status == 200
        assert page.locator("h1:has-text('Insights')").is_visible()
        assert page.locator("script").count() == 0
        assert page.locator("svg[role=img]").count() >= 4
        # the table fallback of the active versions chart, as the browser reads it
        page.locator("summary:has-text('Table: Active versions')").click()
        table = page.locator("#versions-table")
        assert table.is_visible()
        head = table.locator("thead th").all_inner_texts()
        assert head == ["Day", "1.0.0", "1.1.0"], head
        row = table.locator(f"tbody tr:has(th:text-is('{today}'))")
        assert row.locator("td").all_inner_texts() == ["7", "3"]
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, (width, scroll)
        if width <= 600:  # a phone: the chart's own text as drawn on the screen, in CSS px
            drawn = page.evaluate(_TEXT_SIZES)
            assert drawn and min(size for size, _ in drawn) >= 10, (width, sorted(drawn)[:5])
        problems += [f"@{width}: {v}" for v in _axe_violations(page)]
        context.close()
        assert errors == [], errors
    assert problems == [], problems

    anonymous = browser.new_context()
    reply = anonymous.new_page().goto(f"{stack.base_url}dana/app/insights")
    assert reply is not None and reply.status == 404
    anonymous.close()
