"""The signed-in user's settings pages (docs/accounts.md): tokens made, shown once, listed and
deleted; the password changed (ending every other session); a password that must change."""

from __future__ import annotations

import re
from typing import Any

import pytest
from forge_orgs.service import create_app
from forge_testing.browser import Browser

ORIGIN = "http://forge.test"


def world() -> dict[str, Any]:
    return {
        "users": [
            {"name": "olive", "password": "olive-password"},
            {"name": "mia", "password": "mia-password"},
        ],
        "orgs": [
            {
                "name": "priv",
                "visibility": "private",
                "members": [{"user": "olive", "owner": True}],
            }
        ],
    }


@pytest.fixture
async def server(aiohttp_client: Any, settings: Any, load: Any) -> Any:
    await load(world())
    return await aiohttp_client(create_app(settings))


@pytest.fixture
async def olive(server: Any) -> Any:
    async with Browser(server.make_url("/"), origin=ORIGIN) as b:
        assert (await b.sign_in("olive", "olive-password")).status == 303
        yield b


def _secret(html: str) -> str:
    found = re.search(r'<code class="secret" id="new-token">([0-9a-f]{40})</code>', html)
    assert found, html
    return found.group(1)


async def test_a_token_is_made_shown_once_listed_and_deleted(server, olive, db):
    status, page = await olive.get("/user/settings/applications")
    assert status == 200 and "You have no tokens." in page
    data = {"name": "ci", "scope": ["write:repository", "read:repository", "read:organization"]}
    reply = await olive.submit("/user/settings/applications", data, page=page)
    assert reply.status == 201 and reply.headers["Cache-Control"] == "no-store"
    secret = _secret(await reply.text())
    row = await db.fetchrow("SELECT scopes, token_last_eight FROM core.access_tokens")
    # write implies read: only what adds something is stored
    assert sorted(row["scopes"]) == ["read:organization", "write:repository"]
    assert row["token_last_eight"] == secret[-8:]
    # the token works on the API, as its user, within its scopes
    api = await server.get(
        "/api/v1/orgs/priv/overview", headers={"Authorization": f"token {secret}"}
    )
    assert api.status == 200
    # listed by name and last eight only, never shown again
    status, page = await olive.get("/user/settings/applications")
    assert "ci" in page and secret[-8:] in page and secret not in page
    token_id = re.search(r'name="id" value="(\d+)"', page).group(1)
    reply = await olive.submit("/user/settings/applications/delete", {"id": token_id}, page=page)
    assert reply.status == 303 and reply.headers["Location"] == "/user/settings/applications"
    assert await db.fetchval("SELECT count(*) FROM core.access_tokens") == 0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "", "scope": "all"}, "Give the token a name"),
        ({"name": "x"}, "Choose at least one scope."),
        ({"name": "x", "scope": "sudo"}, "Choose at least one scope."),
    ],
)
async def test_a_bad_token_form_says_why(olive, data, message):
    _, page = await olive.get("/user/settings/applications")
    reply = await olive.submit("/user/settings/applications", data, page=page)
    assert reply.status == 422 and message in await reply.text()


async def test_a_second_token_of_the_same_name_is_refused(olive):
    _, page = await olive.get("/user/settings/applications")
    data = {"name": "ci", "scope": "all"}
    assert (await olive.submit("/user/settings/applications", data, page=page)).status == 201
    reply = await olive.submit("/user/settings/applications", data, page=page)
    assert reply.status == 422 and "already have a token" in await reply.text()


async def test_nobody_deletes_another_users_token(server, olive, db):
    mia_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'mia'")
    token_id = await db.fetchval(
        """INSERT INTO core.access_tokens (user_id, name, token_sha256)
           VALUES ($1, 'mine', sha256('x')) RETURNING id""",
        mia_id,
    )
    _, page = await olive.get("/user/settings/applications")
    reply = await olive.submit("/user/settings/applications/delete", {"id": token_id}, page=page)
    assert reply.status == 303
    assert await db.fetchval("SELECT count(*) FROM core.access_tokens") == 1


@pytest.mark.parametrize(
    "path",
    [
        "/user/settings/applications",
        "/user/settings/account",
        "/user/settings/change_password",
    ],
)
async def test_settings_need_a_browser_session(server, path):
    reply = await server.get(path)
    assert reply.status == 401 and reply.headers["Content-Type"].startswith("text/html")
    # a token is not a browser session: its forms could carry no CSRF token
    reply = await server.post(path, data={}, headers={"Origin": ORIGIN})
    assert reply.status in (401, 403)


async def test_a_forged_token_form_is_refused(olive, db):
    reply = await olive.post(
        "/user/settings/applications", {"name": "evil", "scope": "all"}, origin="http://evil.test"
    )
    assert reply.status == 403
    await olive.get("/user/settings/applications")
    reply = await olive.post(
        "/user/settings/applications", {"_csrf": "x", "name": "e", "scope": "all"}
    )
    assert reply.status == 403
    assert await db.fetchval("SELECT count(*) FROM core.access_tokens") == 0


async def test_a_password_change_ends_every_other_session(server, olive, db):
    async with Browser(server.make_url("/"), origin=ORIGIN) as other:
        await other.sign_in("olive", "olive-password")
        assert (await other.get("/priv"))[0] == 200
        _, page = await olive.get("/user/settings/account")
        wrong = {"old_password": "nope-nope", "password": "new-password", "retype": "new-password"}
        reply = await olive.submit("/user/settings/account", wrong, page=page)
        assert reply.status == 422 and "current password is wrong" in await reply.text()
        data = {"old_password": "olive-password", "password": "new-pass", "retype": "new-pazz"}
        reply = await olive.submit("/user/settings/account", data, page=page)
        assert reply.status == 422 and "do not match" in await reply.text()
        data["retype"] = data["password"] = "short"
        reply = await olive.submit("/user/settings/account", data, page=page)
        assert reply.status == 422 and "at least 8" in await reply.text()
        data["retype"] = data["password"] = "olive-new-password"
        reply = await olive.submit("/user/settings/account", data, page=page)
        assert reply.status == 200 and "every other session" in await reply.text()
        assert (await other.get("/priv"))[0] == 404  # signed out elsewhere
        assert (await olive.get("/priv"))[0] == 200  # not here
        assert await db.fetchval("SELECT count(*) FROM core.sessions") == 1
    async with Browser(server.make_url("/"), origin=ORIGIN) as again:
        assert (await again.sign_in("olive", "olive-password")).status == 200  # the old one
        assert (await again.sign_in("olive", "olive-new-password")).status == 303


async def test_a_password_that_must_change_is_changed_at_first_sign_in(server, db):
    await db.execute("UPDATE core.accounts SET must_change_password = true WHERE name = 'mia'")
    async with Browser(server.make_url("/"), origin=ORIGIN) as mia:
        reply = await mia.sign_in("mia", "mia-password", redirect_to="/priv")
        assert reply.headers["Location"] == "/user/settings/change_password"
        # every page sends them there until it is done, and they are nobody meanwhile
        assert (await mia.get("/priv"))[0] == 303
        assert (await mia.get("/user/settings/applications"))[0] == 303
        status, page = await mia.get("/user/settings/change_password")
        assert status == 200
        data = {"password": "mia-new-password", "retype": "mia-new-password"}
        reply = await mia.submit("/user/settings/change_password", data, page=page)
        assert reply.status == 303 and reply.headers["Location"] == "/"
        assert (await mia.get("/user/settings/applications"))[0] == 200
    assert not await db.fetchval("SELECT must_change_password FROM core.accounts WHERE name='mia'")


async def test_the_first_sign_in_page_is_only_for_a_password_that_must_change(olive):
    status, _ = await olive.get("/user/settings/change_password")
    assert status == 303
    _, page = await olive.get("/user/settings/account")
    data = {"password": "olive-other-password", "retype": "olive-other-password"}
    reply = await olive.submit("/user/settings/change_password", data, page=page)
    assert reply.status == 303 and reply.headers["Location"] == "/user/settings/account"
    async with Browser(olive.base, origin=ORIGIN) as again:  # the password did not change
        assert (await again.sign_in("olive", "olive-password")).status == 303
