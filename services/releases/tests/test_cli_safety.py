"""`forge release withdraw|restore|required|critical|audit`: the real `forge` command (a
subprocess) against a running releases server; the feeds follow, and each change is in the audit
log with the source `cli`, which `forge release audit` prints."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from forge_common.config import Settings
from forge_releases.service import create_app

from .publish_support import forge_release
from .support import TOKENS, one_repo, rel


@pytest.fixture
async def server(settings: Settings, aiohttp_server: Any, load: Any) -> TestServer:
    releases = []
    for minute, version in enumerate(("1.0.0", "1.1.0", "1.2.0"), 1):
        release = rel(f"v{version}", minute)
        release["assets"] = [{"name": f"App-{version}-mac.zip", "content": version}]
        releases.append(release)
    await load(one_repo(releases))
    result: TestServer = await aiohttp_server(create_app(settings), host="127.0.0.1")
    return result


async def _offered(server: TestServer, version: str) -> tuple[str | None, bool]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(server.make_url(f"/owner/app/darwin-x64/{version}")) as resp,
    ):
        if resp.status == 204:
            return None, False
        body = await resp.json()
        return body["name"], bool(body.get("mandatory"))


async def test_withdraw_required_critical_and_the_audit_log(server: TestServer, db: Any) -> None:
    url = str(server.make_url("/"))
    token = TOKENS["owner"]
    status, out, err = await forge_release(
        "withdraw", "owner/app", "v1.2.0", "--reason", "crashes", url=url, token=token
    )
    assert status == 0, err
    assert out.strip() == "v1.2.0: withdrawn"
    assert await _offered(server, "1.2.0") == ("v1.1.0", False)  # Squirrel.Mac rolls back

    status, out, err = await forge_release("required", "owner/app", "v1.1.0", url=url, token=token)
    assert status == 0 and out.strip() == "v1.1.0: required", err
    status, _, err = await forge_release("critical", "owner/app", "v1.1.0", url=url, token=token)
    assert status == 0, err
    assert await _offered(server, "1.0.0") == ("v1.1.0", True)
    status, _, _ = await forge_release(
        "critical", "owner/app", "v1.1.0", "--off", url=url, token=token
    )
    assert await _offered(server, "1.0.0") == ("v1.1.0", False)
    status, out, _ = await forge_release("restore", "owner/app", "v1.2.0", url=url, token=token)
    assert status == 0 and out.strip() == "v1.2.0: offered normally"

    rows = await db.fetch("SELECT actor, kind, source FROM core.audit_log ORDER BY id")
    assert [(r["actor"], r["kind"], r["source"]) for r in rows] == [
        ("owner", "release.withdrawn", "cli"),
        ("owner", "release.required", "cli"),
        ("owner", "release.critical", "cli"),
        ("owner", "release.critical", "cli"),
        ("owner", "release.restored", "cli"),
    ]
    status, out, err = await forge_release(
        "audit", "owner/app", "--kind", "release.withdrawn", url=url, token=token
    )
    assert status == 0, err
    [line] = out.splitlines()
    assert "\towner\tcli\trelease.withdrawn\towner/app@v1.2.0\t" in line
    assert 'withdrawn_reason: "" → "crashes"' in line


async def test_mistakes_are_one_line_and_change_nothing(server: TestServer, db: Any) -> None:
    url = str(server.make_url("/"))
    status, _, err = await forge_release(
        "withdraw", "owner/app", "v9.9.9", url=url, token=TOKENS["owner"]
    )
    assert status == 1 and err.strip() == "forge: no such release in this repository (404)"
    status, _, err = await forge_release(
        "withdraw", "owner/app", "v1.2.0", url=url, token=TOKENS["stranger"]
    )
    assert status == 1 and err.startswith("forge: ") and len(err.splitlines()) == 1
    status, _, err = await forge_release("audit", "owner/app", url=url, token=TOKENS["stranger"])
    assert status == 1 and "404" in err
    assert await db.fetchval("SELECT count(*) FROM core.audit_log") == 0
