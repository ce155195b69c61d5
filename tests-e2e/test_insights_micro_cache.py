"""docs/insights.md "Behind the micro-cache": update checks nginx answers from its 1-second cache
never reach the service, yet every one is counted, exactly, through nginx's log of them; the
insights API (through nginx too) shows the counts."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

TOKEN = "insights-owner-token"
WORLD = {
    "users": [{"name": "owner", "tokens": [TOKEN]}],
    "repos": [
        {
            "owner": "owner",
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
CHECK = "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform=darwin&arch=arm64"
UP_TO_DATE = "/api/v2/repos/owner/app/releases/update?version=1.1.0&platform=darwin&arch=arm64"
MAC = "/owner/app/darwin-arm64/1.0.0"  # update.electronjs.org's Squirrel.Mac shape


def insights(stack: Stack, by: str) -> dict[str, int]:
    reply = stack.get(
        f"/api/v2/repos/owner/app/insights?interval=hour&by={by}",
        {"Authorization": f"token {TOKEN}"},
    )
    assert reply.status == 200, reply.body
    series = json.loads(reply.body)["checks"]["series"]
    return {s["value"]: s["total"] for s in series}


def test_checks_answered_by_the_micro_cache_are_counted_exactly(stack: Stack) -> None:
    sent = {CHECK: 120, UP_TO_DATE: 40, MAC: 30}
    statuses: dict[str, int] = {}
    for path, n in sent.items():
        for _ in range(n):
            reply = stack.get(path)
            assert reply.status in (200, 204), reply.body
            cache = reply.headers.get("X-Cache-Status", "")
            statuses[cache] = statuses.get(cache, 0) + 1
    # most were answered by nginx alone: only these lines can count them
    assert statuses.get("HIT", 0) > sum(sent.values()) / 2, statuses

    expected_running = {"1.0.0": 150, "1.1.0": 40}
    deadline = time.monotonic() + 30
    while insights(stack, "version") != expected_running:
        # nginx writes its log at least every second, the service reads it every 2 s
        assert time.monotonic() < deadline, insights(stack, "version")
        time.sleep(0.2)
    assert insights(stack, "feed") == {"update": 160, "squirrel-mac": 30}
    assert insights(stack, "offered") == {"1.1.0": 150, "": 40}
    # later rounds count what came later, and nothing twice
    assert stack.get(CHECK).status == 200
    deadline = time.monotonic() + 30
    while (running := insights(stack, "version")) != {"1.0.0": 151, "1.1.0": 40}:
        assert time.monotonic() < deadline and running["1.0.0"] <= 151, running
        time.sleep(0.2)
