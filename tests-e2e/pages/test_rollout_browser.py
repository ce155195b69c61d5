"""The rollout plan on the release's console page in a real browser (docs/rollouts.md "Console"):
Debian's Chromium, driven by Playwright, against the three services behind nginx, evaluating
plans every 0.2 s. A publisher starts a plan from the form, pauses and resumes it with one click
each; crash figures posted for the new release halt it and the page says why. axe-core finds no
serious or critical violation on the page at 1280 and 360 px."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from ..conftest import Stack
from .test_console_browser import check_page
from .test_pages_browser import WIDTHS, browser

__all__ = ["browser"]

# Beyond the browser suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

PASSWORD = "pia-publisher-pass"
TOKEN = {"Authorization": "token pia-rollout-token", "Content-Type": "application/json"}
STACK_ENV = {"ROLLOUT_EVALUATION_SECONDS": "0.2", "INSIGHTS_FLUSH_SECONDS": "0.2"}
WORLD = {
    "users": [{"name": "pia", "password": PASSWORD, "tokens": ["pia-rollout-token"]}],
    "repos": [
        {
            "owner": "pia",
            "name": "app",
            "private": True,
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0.AppImage", "content": "one"}],
                },
                {
                    "tag": "v1.1.0",
                    "created_at": "2026-01-02T00:00:00Z",
                    "rollout": 5,
                    "assets": [{"name": "App-1.1.0.AppImage", "content": "two"}],
                },
            ],
        }
    ],
}
EDIT = "pia/app/releases/edit/v1.1.0"
API = "/api/v2/repos/pia/app/releases"


def release_id(stack: Stack, tag: str) -> int:
    reply = stack.get(f"{API}/{tag}", TOKEN)
    assert reply.status == 200, reply.body
    return int(reply.json()["id"])


def state_shown(page: Any) -> str:
    return str(page.locator("#plan-state").inner_text())


def test_a_publisher_runs_and_sees_a_plan_halt_in_the_browser(stack: Stack, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(stack.base_url + "user/login?redirect_to=/pia")
    page.fill("#user_name", "pia")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]:has-text('Sign in')")
    page.wait_for_url(re.compile(r"/pia$"))

    page.goto(stack.base_url + EDIT)
    assert "No plan" in page.locator("#rollout-plan").inner_text()
    page.fill("#plan_steps", "10 3600\n50 3600\n100 3600")
    page.click("button:has-text('Start plan')")
    page.wait_for_url(re.compile(r"/releases/edit/v1\.1\.0#rollout-plan$"))
    assert state_shown(page) == "running"
    assert page.locator("#plan-percent").inner_text() == "10%"
    feed = stack.get(f"{API}/feeds/electron/latest-linux.yml", TOKEN)
    assert json.loads(feed.body)["stagingPercentage"] == 10

    page.click("button:has-text('Pause')")
    page.wait_for_selector("#plan-state:has-text('paused')")
    assert "Paused at step 1 of 3 (10 %) by pia" in page.locator("#plan-reason").inner_text()
    page.click("button:has-text('Resume')")
    page.wait_for_selector("#plan-state:has-text('running')")

    # crash figures of the new release far worse than the old one's: the gate halts the plan
    for tag, crashed in (("v1.0.0", 2), ("v1.1.0", 300)):
        body = json.dumps({"sessions": 1000, "crashed_sessions": crashed}).encode()
        posted = stack.request("POST", f"{API}/{release_id(stack, tag)}/health", TOKEN, body)
        assert posted.status == 204, posted.body
    plan = f"{API}/{release_id(stack, 'v1.1.0')}/rollout_plan"
    deadline = time.monotonic() + 20
    while stack.get(plan, TOKEN).json()["state"] != "halted":
        assert time.monotonic() < deadline, stack.get(plan, TOKEN).body
        time.sleep(0.05)  # the poll's pace; the wait ends on the state, not on a time
    page.reload()
    assert state_shown(page) == "halted"
    reason = page.locator("#plan-reason").inner_text()
    assert reason.startswith("Halted at step 1 of 3 (10 %): the external-signal gate failed")
    assert "crash-free sessions 70.0 % against 99.8 %" in reason
    assert "halted" in page.locator("table.plan-history tbody tr").first.inner_text()
    assert json.loads(stack.get(f"{API}/feeds/electron/latest-linux.yml", TOKEN).body)[
        "stagingPercentage"
    ] == 10  # frozen  # fmt: skip

    violations: list[str] = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        violations += check_page(page, "rollout-plan", width)
    assert violations == []
    context.close()
