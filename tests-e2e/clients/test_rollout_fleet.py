"""A simulated fleet through nginx while rollout plans run on an accelerated clock (plans
evaluated every 0.2 s, insights written every 0.2 s: docs/rollouts.md "Testing"): real
electron-updater clients from npm, each with its own staging id, Squirrel.Windows-style clients
reading RELEASES with theirs, and update-check clients that say the version they run.

- the percentage rises by the plan, and at each percentage exactly the installs inside it are
  offered the release;
- a share of the offered installs that keeps checking in on the old version halts the plan at
  the evaluation that first has enough checks, and no install outside the reached share is
  offered the release afterwards;
- crash figures of the new version below the old one's halt it the same way;
- with `on_failure: withdraw`, the halt also withdraws the release: the installs that took it
  are offered the previous version where their client rolls back (electron-updater with
  `allowDowngrade`, Squirrel.Windows), the others are offered nothing new.

A client's check is compared with the plan only when the plan's percentage was the same before
and after it (it may move meanwhile: the test waits on states, never on times). The fleet asks
the releases service itself, not through nginx: the micro-cache's second would blur each step's
boundary (what nginx adds is tested in tests-e2e/test_micro_cache.py and, for the counts of the
checks it answers, test_insights_micro_cache.py)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from forge_testing.waiting import until

from .test_updaters import parse_releases

if TYPE_CHECKING:
    from conftest import Stack

    from .conftest import RunNode

# Beyond the clients suite's smoke: `make test-full` runs it (docs/decisions.md).
pytestmark = [pytest.mark.e2e, pytest.mark.full]

TOKEN = {"Authorization": "token fay-fleet-token", "Content-Type": "application/json"}
STACK_ENV = {"ROLLOUT_EVALUATION_SECONDS": "0.2", "INSIGHTS_FLUSH_SECONDS": "0.2"}
REPOS = ("rises", "stuck", "crashes", "yank")


def _release(name: str, tag: str, day: int, **flags: Any) -> dict[str, Any]:
    version = tag[1:]
    files = [f"Fleet-{version}.AppImage", f"Fleet-{version}-full.nupkg"]
    return {
        "tag": tag,
        "created_at": f"2026-03-{day:02d}T08:00:00Z",
        "assets": [{"name": f, "content": f"{name} {f} " * 20} for f in files],
        **flags,
    }


WORLD = {
    "users": [{"name": "fay", "tokens": ["fay-fleet-token"]}],
    "repos": [
        {
            "owner": "fay",
            "name": name,
            "releases": [_release(name, "v1.0.0", 1), _release(name, "v1.1.0", 2, rollout=1)],
        }
        for name in REPOS
    ],
}


def staging_id(bucket: float) -> str:
    """An install's staging id placing it at `bucket` (0-1): electron-updater and Squirrel read
    the id's last four bytes as a share of 2^32 - 1."""
    return str(uuid.UUID(f"3f2b8c1e-4d5a-4b6c-8d7e-9f0a{int(bucket * 0xFFFFFFFF):08x}"))


ELECTRON = (0.05, 0.3, 0.6, 0.95)  # electron-updater installs (Node is slow: four)
SQUIRREL = tuple((i + 0.5) / 20 for i in range(20))  # Squirrel.Windows-style installs


def api(repo: str) -> str:
    return f"/api/v2/repos/fay/{repo}/releases"


def release_id(stack: Stack, repo: str, tag: str) -> int:
    return int(stack.get(f"{api(repo)}/{tag}", TOKEN).json()["id"])


def plan_of(stack: Stack, repo: str) -> dict[str, Any]:
    reply = stack.get(f"{api(repo)}/{release_id(stack, repo, 'v1.1.0')}/rollout_plan", TOKEN)
    assert reply.status == 200, reply.body
    return dict(reply.json())


def put_plan(stack: Stack, repo: str, plan: dict[str, Any]) -> None:
    path = f"{api(repo)}/{release_id(stack, repo, 'v1.1.0')}/rollout_plan"
    reply = stack.request("PUT", path, TOKEN, json.dumps(plan).encode())
    assert reply.status == 200, reply.body


def fleet_get(stack: Stack, path: str) -> Any:
    """An install's request, to the releases service (see the module's note)."""
    return stack.direct("releases", "GET", path)


def squirrel_offered(stack: Stack, repo: str, bucket: float) -> str:
    """The newest full package a Squirrel.Windows install at `bucket` takes from RELEASES:
    staged entries only below their percentage."""
    text = fleet_get(stack, f"{api(repo)}/feeds/squirrel/x64/RELEASES?id=Fleet&localVersion=1.0.0")
    assert text.status == 200
    entries = [
        e
        for e in parse_releases(text.body.decode())
        if not e["delta"] and (e["staged"] is None or bucket * 100 < e["staged"])
    ]
    return max(entries, key=lambda e: tuple(int(p) for p in e["version"].split(".")))["version"]


def electron_offered(node: RunNode, stack: Stack, repo: str, bucket: float, work: Path) -> bool:
    feed = f"http://127.0.0.1:{stack.ports['releases']}{api(repo)}/feeds/electron"
    found = node("electron-updater.js", feed, "1.0.0", str(work / f"{bucket}"), staging_id(bucket))
    return bool(found["available"])


def check_in(stack: Stack, repo: str, running: list[str], stuck: set[int]) -> None:
    """One update check of every install of `running` (the versions they run); those offered
    1.1.0 take it and, started again, check in on it, except the `stuck` ones (their update
    fails: they keep checking in on 1.0.0 and are offered 1.1.0 again)."""
    for index, version in enumerate(running):
        reply = fleet_get(stack, f"{api(repo)}/update?version={version}&platform=linux&arch=x64")
        assert reply.status in (200, 204)
        if reply.status == 200 and index not in stuck:
            running[index] = reply.json()["name"].lstrip("v")
            again = f"{api(repo)}/update?version={running[index]}&platform=linux&arch=x64"
            assert fleet_get(stack, again).status == 204


def inside(bucket: float, percent: int) -> bool:
    return percent >= 100 or bucket * 100 < percent


def fleet_round(
    stack: Stack, node: RunNode, repo: str, work: Path, *, electron: bool = True
) -> tuple[int, dict[float, bool], dict[float, str]]:
    """The plan's percentage and what each install was offered, when it stayed the same during
    the round (else -1)."""
    before = plan_of(stack, repo)["percent"]
    seen = {b: electron_offered(node, stack, repo, b, work) for b in ELECTRON} if electron else {}
    packages = {b: squirrel_offered(stack, repo, b) for b in SQUIRREL}
    after = plan_of(stack, repo)["percent"]
    return (before if before == after else -1), seen, packages


def assert_offers(percent: int, electron: dict[float, bool], squirrel: dict[float, str]) -> None:
    for bucket, available in electron.items():
        assert available == inside(bucket, percent), (percent, bucket)
    for bucket, version in squirrel.items():
        assert version == ("1.1.0" if inside(bucket, percent) else "1.0.0"), (percent, bucket)


def plan_action(stack: Stack, repo: str, action: str) -> None:
    path = f"{api(repo)}/{release_id(stack, repo, 'v1.1.0')}/rollout_plan/{action}"
    reply = stack.request("POST", path, TOKEN, b"")
    assert reply.status == 200, reply.body


def wait_for_plan(stack: Stack, repo: str, ready: Callable[[dict[str, Any]], bool]) -> None:
    deadline = time.monotonic() + 120
    while not ready(plan := plan_of(stack, repo)):
        assert time.monotonic() < deadline, plan


def test_the_percentage_rises_by_the_plan(stack: Stack, run_node: RunNode, tmp_path: Path) -> None:
    """The plan moves by itself from step to step; at each staged step the whole fleet is compared
    with the plan while the test holds the step still (paused: a loaded machine's slow Node runs
    would otherwise let a hold end mid-comparison; resuming holds the step its full time again)."""
    gates = {"uptake": {"window_seconds": 0, "min_checks": 20, "min_share": 0.4}}
    put_plan(stack, "rises", {"steps": [
        {"percent": 10, "hold_seconds": 3},
        {"percent": 40, "hold_seconds": 3},
        {"percent": 100, "hold_seconds": 2},
    ], "gates": gates})  # fmt: skip
    running = ["1.0.0"] * 30
    for percent in (10, 40):
        wait_for_plan(stack, "rises", lambda plan, p=percent: plan["percent"] == p)
        plan_action(stack, "rises", "pause")
        check_in(stack, "rises", running, stuck=set())  # a healthy fleet
        _, electrons, squirrels = fleet_round(stack, run_node, "rises", tmp_path)
        assert len(electrons) == len(ELECTRON) and len(squirrels) == len(SQUIRREL)
        assert_offers(percent, electrons, squirrels)
        plan_action(stack, "rises", "resume")
    wait_for_plan(stack, "rises", lambda plan: plan["state"] == "done")
    history = plan_of(stack, "rises")["history"]
    assert [(h["decision"], h["percent"]) for h in history] == [
        ("planned", 10), ("paused", 10), ("resumed", 10), ("advanced", 40),
        ("paused", 40), ("resumed", 40), ("advanced", 100), ("done", 100)
    ]  # fmt: skip
    percent, electrons, squirrels = fleet_round(stack, run_node, "rises", tmp_path)
    assert percent == 100
    assert_offers(100, electrons, squirrels)


def test_installs_stuck_on_the_old_version_halt_the_plan(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    gates = {"uptake": {"window_seconds": 0, "min_checks": 20, "min_share": 0.4}}
    steps = [{"percent": 10, "hold_seconds": 3600}, {"percent": 100, "hold_seconds": 1}]
    put_plan(stack, "stuck", {"steps": steps, "gates": gates})
    running = ["1.0.0"] * 30
    stuck = set(range(21))  # 70 % of the installs offered it fail to take it
    deadline = time.monotonic() + 60
    while plan_of(stack, "stuck")["state"] != "halted":
        assert time.monotonic() < deadline, plan_of(stack, "stuck")
        check_in(stack, "stuck", running, stuck)
    plan = plan_of(stack, "stuck")
    assert [h["decision"] for h in plan["history"]] == ["planned", "halted"]
    assert plan["reason"].startswith("Halted at step 1 of 2 (10 %): the update-uptake gate failed")
    uptake = plan["history"][-1]["figures"]["gates"]["uptake"]
    assert uptake["running"] + uptake["offered"] >= 20 and uptake["share"] < 0.4, uptake
    # frozen at 10 %: installs outside it are not offered the release, those inside still are
    check_in(stack, "stuck", running, stuck)
    percent, electron, squirrel = fleet_round(stack, run_node, "stuck", tmp_path)
    assert percent == 10
    assert_offers(10, electron, squirrel)
    assert plan_of(stack, "stuck")["state"] == "halted"


def test_an_external_signal_below_threshold_halts_the_plan(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    steps = [{"percent": 25, "hold_seconds": 3600}, {"percent": 100, "hold_seconds": 1}]
    put_plan(stack, "crashes", {"steps": steps})  # default gates: both on
    for tag, crashed in (("v1.0.0", 10), ("v1.1.0", 120)):
        body = json.dumps({"sessions": 2000, "crashed_sessions": crashed}).encode()
        path = f"{api('crashes')}/{release_id(stack, 'crashes', tag)}/health"
        assert stack.request("POST", path, TOKEN, body).status == 204
    deadline = time.monotonic() + 30
    while plan_of(stack, "crashes")["state"] != "halted":
        assert time.monotonic() < deadline, plan_of(stack, "crashes")
        time.sleep(0.05)  # the poll's pace; the wait ends on the state
    plan = plan_of(stack, "crashes")
    assert plan["reason"] == (
        "Halted at step 1 of 2 (25 %): the external-signal gate failed (crash-free sessions "
        "94.0 % against 99.5 % for the release it replaces: down by more than 1.0 %)"
    )
    percent, electron, squirrel = fleet_round(stack, run_node, "crashes", tmp_path)
    assert percent == 25
    assert_offers(25, electron, squirrel)


def _post_health(stack: Stack, repo: str, figures: dict[str, int]) -> None:
    for tag, crashed in figures.items():
        body = json.dumps({"sessions": 2000, "crashed_sessions": crashed}).encode()
        path = f"{api(repo)}/{release_id(stack, repo, tag)}/health"
        assert stack.request("POST", path, TOKEN, body).status == 204


def test_withdraw_on_failure_rolls_back_the_installs_that_took_it(
    stack: Stack, run_node: RunNode, tmp_path: Path
) -> None:
    steps = [{"percent": 50, "hold_seconds": 3600}, {"percent": 100, "hold_seconds": 1}]
    put_plan(stack, "yank", {"steps": steps, "on_failure": "withdraw"})  # default gates
    feed = f"http://127.0.0.1:{stack.ports['releases']}{api('yank')}/feeds/electron"
    # electron-updater installs (bucket, allowDowngrade): two inside the 50 %, two outside
    installs = {0.05: "allow", 0.3: "deny", 0.6: "allow", 0.95: "deny"}

    def check(bucket: float, running: str, phase: str) -> dict[str, Any]:
        work = str(tmp_path / phase / str(bucket))
        args = (feed, running, work, staging_id(bucket), "", installs[bucket])
        return dict(run_node("electron-updater.js", *args))

    running = {}
    for bucket in installs:  # each takes what it is offered
        got = check(bucket, "1.0.0", "rollout")
        assert got["available"] == inside(bucket, 50), (bucket, got)
        running[bucket] = got["version"] if got["available"] else "1.0.0"
    assert running == {0.05: "1.1.0", 0.3: "1.1.0", 0.6: "1.0.0", 0.95: "1.0.0"}

    _post_health(stack, "yank", {"v1.0.0": 10, "v1.1.0": 120})  # 1.1.0 crashes much more
    until(
        lambda: plan_of(stack, "yank")["state"] == "halted",
        30,
        lambda: f"the plan halted (it is {plan_of(stack, 'yank')})",
    )
    plan = plan_of(stack, "yank")
    assert [h["decision"] for h in plan["history"]] == ["planned", "withdrawn"]
    assert "the external-signal gate failed" in plan["reason"]
    newest = stack.get(f"{api('yank')}/v1.1.0", TOKEN).json()
    assert newest["withdrawn"] is True and newest["withdrawn_reason"]
    yml = f"{api('yank')}/feeds/electron/latest-linux.yml"
    until(
        lambda: json.loads(fleet_get(stack, yml).body)["version"] == "1.0.0",  # JSON is YAML
        10,
        lambda: f"the electron feed naming 1.0.0 (it says {fleet_get(stack, yml).body!r})",
    )

    for bucket, version in running.items():
        got = check(bucket, version, "withdrawn")
        rolls_back = version == "1.1.0" and installs[bucket] == "allow"
        assert got["available"] == rolls_back, (bucket, version, got)
        if rolls_back:  # downloadUpdate() checked the yml's SHA-512 against these bytes
            assert got["version"] == "1.0.0"
            [downloaded] = got["downloaded"]
            assert Path(downloaded).read_text() == "yank Fleet-1.0.0.AppImage " * 20
        else:
            assert got["downloaded"] == []
    # Squirrel.Windows: RELEASES tops out at 1.0.0 for every bucket, so an install on 1.1.0
    # finds its version above the remote one and installs that full package; one on 1.0.0 has
    # nothing new
    assert {squirrel_offered(stack, "yank", b) for b in SQUIRREL} == {"1.0.0"}
    # and the spec's update check never offers a lower version: nothing to either
    for version in ("1.0.0", "1.1.0"):
        answer = fleet_get(stack, f"{api('yank')}/update?version={version}&platform=linux&arch=x64")
        assert answer.status == 204, version
    audit = stack.get("/api/v2/repos/fay/yank/audit?kind=rollout_plan.withdrawn", TOKEN).json()
    assert [(e["actor"], e["source"]) for e in audit] == [(None, "system")]
