"""Forms act for a signed-in browser only (docs/accounts.md "Forms act for sessions only").

Every route of every installed service that changes state outside the JSON APIs is a page's form,
and each is in `FORMS` with what an attacker would post to it. The attack: a token of narrow scope
(`read:repository`, `read:user`, `write:release`) or of every scope (`all`), of a user who may do
everything, sent as `Authorization` with a CSRF pair anyone can make for themselves (a pre-session
cookie and its token, from the sign-in page). Each form refuses it (403, before anything is read or
written), and not one row of the database changes. A form added without a row here fails
`test_every_form_is_decided`.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from forge_common.accounts.tokens import create_token
from forge_common.app import create_app
from forge_common.keys import DB_POOL
from forge_common.pages.render import is_page_handler
from forge_common.service import installed_services
from forge_testing.browser import Browser, csrf_of

SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
# Where nothing is a page's form: the JSON APIs (tokens and their scopes), the gateway's signed
# internal ingest, and plugin routes (the gateway strips credentials before a plugin sees them).
NOT_FORMS = ("/api/", "/internal/")

# (method, route) -> the fields an attacker posts: each would act on today's owner's behalf
FORMS: dict[tuple[str, str], dict[str, str]] = {
    ("POST", "/user/login"): {"user_name": "olive", "password": "wrong-password"},
    ("POST", "/user/logout"): {},
    ("POST", "/user/settings/applications"): {"name": "stolen", "scope": "all"},
    ("POST", "/user/settings/applications/delete"): {"id": "1"},
    ("POST", "/user/settings/account"): {
        "old_password": "olive-password-1",
        "password": "attacker-password-2",
        "retype": "attacker-password-2",
    },
    ("POST", "/user/settings/change_password"): {
        "password": "attacker-password-2",
        "retype": "attacker-password-2",
    },
    ("POST", "/org/create"): {"org_name": "planted", "visibility": "0"},
    ("POST", "/repo/create"): {"uid": "1", "repo_name": "planted", "private": "on"},
    ("POST", "/{org}/settings/pins"): {"action": "create_group", "name": "Planted"},
    ("POST", "/{owner}/{repo}/releases/new"): {
        "tag_name": "v6.6.6",
        "name": "Planted",
        "body": "planted",
        "rollout": "100",
        "action": "publish",
    },
    ("POST", "/{owner}/{repo}/releases/edit/{tag}"): {
        "tag_name": "v1.0.0",
        "name": "Renamed",
        "body": "changed",
        "rollout": "100",
        "action": "publish",
    },
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/assets"): {},  # multipart: see `_post`
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/assets/delete"): {"asset_id": "1"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout"): {"rollout": "100"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/unpublish"): {},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/withdraw"): {"reason": "planted"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/safety"): {"required": "on", "critical": "on"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout-plan"): {"plan_steps": "100 1"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/pause"): {},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/resume"): {},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/jump"): {"step": "1"},
    ("POST", "/{owner}/{repo}/releases/edit/{tag}/rollout-plan/finish"): {},
    ("POST", "/{owner}/{repo}/settings"): {"visibility": "public", "public_releases": "on"},
    ("POST", "/{owner}/{repo}/settings/update-keys"): {"name": "stolen"},
    ("POST", "/{owner}/{repo}/settings/update-keys/revoke"): {"id": "1"},
    ("POST", "/{owner}/{repo}/settings/tauri-key"): {"action": "remove"},
    ("POST", "/{owner}/{repo}/settings/linux-key"): {"action": "add", "fingerprint": ""},
}
PATH_VALUES = {"org": "acme", "owner": "acme", "repo": "app", "tag": "v1.0.0"}


def _world() -> dict[str, Any]:
    return {
        "users": [{"name": "olive", "full_name": "Olive", "password": "olive-password-1"}],
        "orgs": [
            {
                "name": "acme",
                "members": [{"user": "olive", "owner": True}],
                "pin_groups": [{"name": "Featured", "display_order": 1}],
                "pins": [{"repo": "app", "group": "Featured", "display_order": 1}],
            }
        ],
        "repos": [
            {
                "owner": "acme",
                "name": "app",
                "private": True,
                "releases": [
                    {
                        "tag": "v1.0.0",
                        "title": "One",
                        "note": "First",
                        "created_at": "2026-01-01T00:00:00Z",
                        "assets": [{"name": "App-1.0.0-x64.zip", "content": "one"}],
                    }
                ],
            }
        ],
    }


def _form_routes(app: Any) -> dict[tuple[str, str], Any]:
    found = {}
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if route.method in SAFE or path.startswith(NOT_FORMS):
            continue
        found[(route.method, path)] = route.handler
    return found


def test_every_form_is_decided(settings: Any) -> None:
    """Every state-changing route outside the APIs is a form in `FORMS`, behind the `page` guard
    that refuses tokens."""
    app = create_app(settings, list(installed_services().values()))
    routes = _form_routes(app)
    assert set(routes) == set(FORMS), "a form without a decision here (or a row for no form)"
    assert [key for key, handler in routes.items() if not is_page_handler(handler)] == []


async def _database_state(db: Any) -> dict[str, str]:
    """A digest of every table of ours: any write anywhere changes it."""
    tables = await db.fetch(
        """SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
            WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"""
    )
    state = {}
    for table in tables:
        name = table["name"]
        state[name] = await db.fetchval(
            f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {name} t"
        )
    return state


async def _post(browser: Browser, path: str, fields: dict[str, str], token: str) -> Any:
    """The attacker's post: a browser's Origin, the pre-session pair, the token."""
    _, html = await browser.get("/user/login")
    headers = {"Origin": browser.origin, "Authorization": f"token {token}"}
    data: Any = {"_csrf": csrf_of(html), **fields}
    if path.endswith("/assets"):
        data = aiohttp.FormData()
        data.add_field("_csrf", csrf_of(html))
        data.add_field("attachment", b"planted", filename="Planted-x64.zip")
    async with browser.session.post(
        browser.url(path), data=data, headers=headers, allow_redirects=False
    ) as reply:
        return reply.status, await reply.text()


@pytest.mark.parametrize("scope", ["read:repository", "read:user", "write:release", "all"])
async def test_a_token_acts_through_no_form(aiohttp_client, settings, load, db, scope):
    await load(_world())
    client = await aiohttp_client(create_app(settings, list(installed_services().values())))
    pool = client.app[DB_POOL]
    user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'olive'")
    made = await create_token(pool, user_id, "reader", (scope,))
    assert made is not None
    secret = made[1]
    before = await _database_state(db)
    answers = {}
    async with Browser(client.make_url("/"), origin="http://forge.test") as browser:
        for (_, route), fields in FORMS.items():
            path = route.format(**PATH_VALUES)
            answers[route] = await _post(browser, path, fields, secret)
    refused = {route: status for route, (status, _) in answers.items()}
    assert refused == dict.fromkeys(refused, 403)
    assert all("send no Authorization header" in html for _, html in answers.values())
    after = await _database_state(db)
    changed = [name for name in before if before[name] != after.get(name)]
    assert changed == []
    if scope == "all":
        return  # even a token that may do everything acts through no form; the API is its place
    # the API refuses the same token the same writes (its scopes hold there)
    reply = await client.patch(
        "/api/v1/repos/acme/app",
        json={"private": False},
        headers={"Authorization": f"token {secret}"},
    )
    assert reply.status == 403


async def test_the_signed_in_browser_still_acts(aiohttp_client, settings, load):
    """The same form with the session cookie and no token is the owner's own act."""
    await load(_world())
    client = await aiohttp_client(create_app(settings, list(installed_services().values())))
    async with Browser(client.make_url("/"), origin="http://forge.test") as browser:
        assert (await browser.sign_in("olive", "olive-password-1")).status == 303
        _, html = await browser.get("/acme/app/settings")
        reply = await browser.submit("/acme/app/settings", {"visibility": "private"}, page=html)
        assert reply.status == 303
        # and a browser whose site sends a token besides its cookie is refused, not mixed up
        reply = await browser.submit(
            "/acme/app/settings",
            {"visibility": "public"},
            page=html,
            headers={"Authorization": "token whatever"},
        )
        assert reply.status == 403
