"""forge's own scope `write:release` (docs/accounts.md "Scopes") on the orgs service: every write
route of its route table refuses it before looking anything up (none is a release route), so a
route added without a scope decision fails here; the token page offers it, apart from Gitea's."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from forge_common import scopes
from forge_common.accounts import tokens
from forge_orgs.service import create_app
from forge_testing.browser import Browser

REFUSED = "token does not have at least one of required scope(s): ["
_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\}")
VALUES = {"org": "acme", "owner": "acme", "repo": "app", "username": "olive", "name": "olive"}


def world() -> dict[str, Any]:
    return {
        "users": [{"name": "olive", "password": "olive-password", "tokens": ["olive-token"]}],
        "orgs": [{"name": "acme", "members": [{"user": "olive", "owner": True}]}],
        "repos": [{"owner": "acme", "name": "app"}],
    }


@pytest.fixture
async def server(aiohttp_client: Any, settings: Any, load: Any) -> Any:
    await load(world())
    return await aiohttp_client(create_app(settings))


def _write_routes(app: web.Application) -> list[tuple[str, str]]:
    found = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        template = info.get("formatter") or info.get("path") or ""
        if route.method not in scopes.READ_METHODS and route.method != "*":
            found.add((route.method, template))
    return sorted(found)


async def test_a_write_release_token_can_change_nothing_here(server: Any, db: Any) -> None:
    olive = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'olive'")
    made = await tokens.create_token(db, olive, "ci", ("write:release",))
    assert made is not None
    checked = 0
    headers = {"Authorization": f"token {made[1]}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        for method, template in _write_routes(server.app):
            path = _PLACEHOLDER.sub(lambda m: VALUES.get(m.group(1), "1"), template)
            if not path.startswith("/api/"):
                continue  # pages and their forms: the form side of the decision
            assert scopes.required_scope(method, path) is not None, (method, template)
            assert not scopes.publishes(method, path)
            async with http.request(method, server.make_url(path), json={}) as reply:
                body = await reply.text()
            assert reply.status == 403 and REFUSED in body, (method, path, reply.status, body)
            checked += 1
    assert checked >= 15  # orgs, teams, members, repositories, tokens, admin users
    assert await db.fetchval("SELECT count(*) FROM core.accounts") == 2  # nothing was made


async def test_the_token_page_offers_forges_own_scope(server: Any) -> None:
    async with Browser(server.make_url("/"), origin="http://forge.test") as browser:
        assert (await browser.sign_in("olive", "olive-password")).status == 303
        status, page = await browser.get("/user/settings/applications")
        assert status == 200 and 'value="write:release"' in page
        form = {"name": "ci", "scope": "write:release"}
        made = await browser.submit("/user/settings/applications", form, page=page)
        assert made.status == 201
        assert "write:release" in await made.text()
