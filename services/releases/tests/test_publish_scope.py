"""forge's own scope `write:release` (docs/accounts.md "Scopes"): the token CI publishes with.
`forge release publish` works with it; every other write route of this service, taken from its
route table, refuses it before looking anything up, so a route added without a scope decision
fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from forge_common import scopes
from forge_common.accounts import tokens
from forge_common.config import Settings
from forge_releases.service import create_app
from yarl import URL

from .publish_support import forge_release, publish_world

REFUSED = "token does not have at least one of required scope(s): [write:repository]"
_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\}")
VALUES = {"owner": "owner", "repo": "pub", "collaborator": "reader", "tag": "v1.0.0"}


@pytest.fixture
async def server(settings: Settings, aiohttp_server: Any, load: Any) -> TestServer:
    await load(publish_world())
    result: TestServer = await aiohttp_server(create_app(settings), host="127.0.0.1")
    return result


async def _ci_token(db: Any) -> str:
    owner = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'owner'")
    made = await tokens.create_token(db, owner, "ci", ("write:release",))
    assert made is not None
    return made[1]


def _concrete(template: str) -> str:
    """A route's path with each placeholder filled with something that exists."""
    return _PLACEHOLDER.sub(lambda m: VALUES.get(m.group(1), "1"), template)


def _write_routes(app: web.Application) -> list[tuple[str, str]]:
    found = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        template = info.get("formatter") or info.get("path") or ""
        if route.method not in scopes.READ_METHODS and route.method != "*":
            found.add((route.method, template))
    return sorted(found)


async def test_forge_release_publish_works_with_a_write_release_token(
    server: TestServer, tmp_path: Path, db: Any
) -> None:
    token = await _ci_token(db)
    asset = tmp_path / "App-3.0.0-arm64.zip"
    asset.write_bytes(b"built" * 1000)
    url = str(server.make_url("/"))
    code, _out, err = await forge_release(
        "publish", "owner/pub", "v3.0.0", asset, url=url, token=token
    )
    assert code == 0, err
    client = server.make_url
    async with aiohttp.ClientSession(headers={"Authorization": f"token {token}"}) as http:
        async with http.get(client("/api/v2/repos/owner/pub/releases/v3.0.0")) as reply:
            assert reply.status == 200  # it reads what it published
        download = "/owner/pub/releases/download/v3.0.0/App-3.0.0-arm64.zip"
        async with http.get(client(download)) as reply:
            assert reply.status == 200 and await reply.read() == asset.read_bytes()
        async with http.get(client("/api/v1/repos/owner/pub")) as reply:
            assert reply.status == 403  # not the repository itself


async def test_a_write_release_token_does_nothing_but_publish(server: TestServer, db: Any) -> None:
    """Every write route of the service's route table, with a `write:release` token: a release
    route gets past the scope check (whatever it then answers); any other is 403 with Gitea's
    message, and nothing changed. Every API route has a scope decision."""
    token = await _ci_token(db)
    decided = []
    async with aiohttp.ClientSession(headers={"Authorization": f"token {token}"}) as http:
        for method, template in _write_routes(server.app):
            path = _concrete(template)
            if path.startswith("/api/"):
                assert scopes.required_scope(method, path) is not None, (method, template)
            elif scopes.required_scope(method, path) is None:
                continue  # a page form: the form side of the decision (forge_common.scopes)
            async with http.request(method, server.make_url(path), json={}) as reply:
                body = await reply.text()
            refused = reply.status == 403 and REFUSED in body
            assert refused != scopes.publishes(method, path), (method, path, reply.status, body)
            decided.append((method, template, refused))
    refused_routes = {(m, t) for m, t, refused in decided if refused}
    for expected in (
        ("DELETE", "/api/v1/repos/{owner}/{repo}"),
        ("PATCH", "/api/v1/repos/{owner}/{repo}"),
        ("PUT", "/api/v1/repos/{owner}/{repo}/collaborators/{collaborator}"),
        ("POST", "/api/v2/repos/{owner}/{repo}/update_keys"),
        ("PUT", "/api/v2/repos/{owner}/{repo}/tauri_key"),
    ):
        assert expected in refused_routes, expected
    assert ("POST", "/api/v2/repos/{owner}/{repo}/releases") not in refused_routes
    # nothing the refused requests named changed
    row = await db.fetchrow("SELECT private FROM core.repositories WHERE name = 'pub'")
    assert row is not None and row["private"] is False
    collaborators = await db.fetchval(
        """SELECT count(*) FROM core.collaborators c JOIN core.repositories r ON r.id = c.repo_id
            WHERE r.name = 'pub'"""
    )
    assert collaborators == 3


async def test_an_encoded_slash_does_not_make_a_release_path(server: TestServer, db: Any) -> None:
    token = await _ci_token(db)
    async with aiohttp.ClientSession(headers={"Authorization": f"token {token}"}) as http:
        url = server.make_url(URL("/api/v1/repos/owner%2Fpub/releases", encoded=True))
        async with http.delete(url) as reply:
            assert reply.status == 403
