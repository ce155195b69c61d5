"""`forge release rollout ...` (docs/rollouts.md "CLI"), run as a publisher's machine runs it
against a real server: set a plan, show it, pause, jump, resume, finish; readers and wrong input
get one-line messages and exit status 1."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from forge_common.config import Settings
from forge_releases.service import create_app

from .publish_support import forge_release
from .rollout_support import FAST_PLANS, TOKENS, world


@pytest.fixture
async def url(settings: Settings, aiohttp_server: Any, load: Any) -> str:
    await load(world())
    server: TestServer = await aiohttp_server(create_app(settings, FAST_PLANS), host="127.0.0.1")
    return str(server.make_url("/"))


async def rollout(*args: str, url: str, who: str = "owner") -> tuple[int, str, str]:
    return await forge_release("rollout", *args, url=url, token=TOKENS[who])


async def test_a_plan_from_the_command_line(url: str, db: Any) -> None:
    status, out, err = await rollout(
        "plan", "owner/app", "v1.1.0", "--steps", "10:3600,50:3600,100:60", url=url
    )
    assert status == 0, err
    assert out.splitlines()[0] == "v1.1.0: running, step 1 of 3, offered to 10% of installs"
    assert out.splitlines()[2] == "steps: 10% for 3600s, 50% for 3600s, 100% for 60s"
    status, out, _ = await rollout("pause", "owner/app", "v1.1.0", url=url)
    assert status == 0 and out.startswith("v1.1.0: paused, step 1 of 3")
    assert "why: Paused at step 1 of 3 (10 %) by owner" in out
    status, out, _ = await rollout("jump", "owner/app", "v1.1.0", "--step", "2", url=url)
    assert status == 0 and out.startswith("v1.1.0: running, step 2 of 3, offered to 50%")
    status, _, err = await rollout("resume", "owner/app", "v1.1.0", url=url)
    assert (status, err.strip()) == (
        1, "forge: not now (409): the plan is running: only a paused or halted plan can be resumed"
    )  # fmt: skip
    status, out, _ = await rollout("show", "owner/app", "v1.1.0", url=url)
    assert status == 0 and out.startswith("v1.1.0: running, step 2 of 3")
    status, out, _ = await rollout("finish", "owner/app", "v1.1.0", url=url)
    assert status == 0 and out.startswith("v1.1.0: done, step 2 of 3, offered to 100%")
    sources = await db.fetch(
        "SELECT kind, actor, source FROM core.audit_log WHERE kind LIKE 'rollout_plan.%' "
        "ORDER BY id"
    )
    assert [tuple(row) for row in sources] == [
        ("rollout_plan.planned", "owner", "cli"),
        ("rollout_plan.paused", "owner", "cli"),
        ("rollout_plan.jumped", "owner", "cli"),
        ("rollout_plan.finished", "owner", "cli"),
    ]


async def test_refusals_are_one_line(url: str) -> None:
    status, _, err = await rollout("show", "owner/app", "v1.1.0", url=url)
    assert status == 1
    assert err.strip() == (
        "forge: this release has no rollout plan (404): set one with `forge release rollout plan`"
    )
    status, _, err = await rollout(
        "plan", "owner/app", "v1.1.0", "--steps", "10:3600", url=url, who="reader"
    )
    assert (status, err.strip()) == (
        1, "forge: only those who may publish releases of the repository can change its plan (403)"
    )  # fmt: skip
    status, _, err = await rollout("plan", "owner/app", "v1.1.0", "--steps", "10-60", url=url)
    assert (status, err.strip()) == (1, "forge: --steps: '10-60' is not percent:seconds[:installs]")
    status, _, err = await rollout("plan", "owner/app", "v1.1.0", "--steps", "50:60,20:60", url=url)
    assert status == 1 and "(422): steps must raise the percentage at each step" in err
    status, _, err = await rollout("show", "owner/app", "v9.9.9", url=url)
    assert (status, err.strip()) == (1, "forge: no such release in this repository (404)")
