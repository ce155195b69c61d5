"""Every scope against every write route of the API (docs/accounts.md "Scopes"), on the whole app
of every installed service (`forge serve --all`). The routes come from the route tables, so a
write route added without a scope decision fails here: each has a category, and a token of each
known scope that the decision does not allow is refused with Gitea's 403 before anything is
looked up, and nothing changes. Page forms refuse every token (test_form_sessions.py)."""

from __future__ import annotations

import re
from typing import Any

from forge_common import scopes
from forge_common.accounts.tokens import KNOWN_SCOPES, create_token
from forge_common.app import create_app
from forge_common.service import installed_services

from .test_form_sessions import _database_state, _world

_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\}")
VALUES = {"org": "acme", "owner": "acme", "repo": "app", "tag": "v1.0.0", "username": "olive"}
REFUSED = "token does not have at least one of required scope(s): [{}]"


def _write_api_routes(app: Any) -> list[tuple[str, str]]:
    found = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        writes = route.method not in scopes.READ_METHODS and route.method != "*"
        if writes and path.startswith("/api/"):
            found.add((route.method, path))
    return sorted(found)


def _decision(scope: str, method: str, path: str) -> bool:
    """What the scope table says, written out: `all`; `write:` of the path's category; forge's
    `write:release` on a repository's releases; nothing else (a read scope never writes)."""
    category = scopes.category_of(path)
    if scope == "all" or scope == f"write:{category}":
        return True
    return scope == scopes.SCOPE_PUBLISH and bool(
        re.match(r"^/api/v[123]/repos/[^/]+/[^/]+/releases(/|$)", path)
    )


async def test_every_scope_against_every_write_route(aiohttp_client, settings, load, db):
    await load(_world())
    client = await aiohttp_client(create_app(settings, list(installed_services().values())))
    routes = _write_api_routes(client.app)
    assert len(routes) >= 50  # releases, compat shapes, orgs, teams, users, admin, plugins
    olive = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'olive'")
    await db.execute("UPDATE core.accounts SET is_admin = true WHERE id = $1", olive)
    secrets = {}
    for scope in sorted(KNOWN_SCOPES):
        made = await create_token(db, olive, f"t-{scope}", (scope,))
        assert made is not None
        secrets[scope] = made[1]
    before = await _database_state(db)
    refusals = 0
    for method, template in routes:
        path = _PLACEHOLDER.sub(lambda m: VALUES.get(m.group(1), "1"), template)
        needed = scopes.required_scope(method, path)
        assert needed is not None and needed.startswith("write:"), (method, template)
        for scope, secret in secrets.items():
            allowed = scopes.token_allows(frozenset({scope}), method, path)
            assert allowed is _decision(scope, method, path), (scope, method, template)
            if allowed:
                continue  # it would act: the writes themselves are tested with each route
            reply = await client.request(
                method, path, json={}, headers={"Authorization": f"token {secret}"}
            )
            body = await reply.text()
            assert reply.status == 403 and REFUSED.format(needed) in body, (
                scope, method, path, reply.status, body,
            )  # fmt: skip
            refusals += 1
    assert refusals >= 6 * len(routes)  # every read scope, at least, on every route
    after = await _database_state(db)
    changed = [name for name in before if before[name] != after.get(name)]
    # a refused request leaves no trace but the tokens' last use
    assert set(changed) <= {"core.access_tokens"}, changed
