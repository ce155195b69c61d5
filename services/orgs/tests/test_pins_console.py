"""The organization owner's pins page `/{org}/settings/pins` (docs/console.md "Pins"): pin, unpin,
reorder by buttons through the API's reorder, groups created, renamed, collapsed, moved and
deleted, one's own public membership; errors in words next to their field; the API's access
rules (404 to whoever may not see the organization, 403 to members who are not owners)."""

from __future__ import annotations

from typing import Any

import pytest
from forge_common.accounts.sessions import start_session
from forge_testing.browser import Browser, csrf_of
from yarl import URL

from .conftest import LOGINS, TOKENS


@pytest.fixture
async def server(aiohttp_client: Any, settings: Any, ids: Any) -> Any:
    from forge_orgs.service import create_app

    return await aiohttp_client(create_app(settings))


async def as_user(server: Any, db: Any, settings: Any, role: str) -> Browser:
    browser = Browser(server.make_url("/"))
    if role != "anonymous":
        user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = $1", LOGINS[role])
        secret = await start_session(db, settings, user_id)
        browser.session.cookie_jar.update_cookies(
            {"forge_session": secret}, URL(str(server.make_url("/")))
        )
    return browser


async def overview(server: Any, org: str = "pub") -> dict[str, Any]:
    reply = await server.get(
        f"/api/v1/orgs/{org}/overview", headers={"Authorization": f"token {TOKENS['owner']}"}
    )
    assert reply.status == 200
    body: dict[str, Any] = await reply.json()
    return body


def loose_order(body: dict[str, Any]) -> list[str]:
    return [p["repo"]["name"] for p in body["pinned_repos"] if not p["group_id"]]


async def act(browser: Browser, fields: dict[str, str], org: str = "pub") -> Any:
    _, page = await browser.get(f"/{org}/settings/pins")
    return await browser.submit(f"/{org}/settings/pins", fields, page=page)


async def test_an_owner_pins_and_reorders_and_the_overview_follows(server, db, settings):
    async with await as_user(server, db, settings, "owner") as owner:
        reply = await act(owner, {"action": "pin", "repo_name": "spare"})
        assert reply.status == 303 and reply.headers["Location"] == "/pub/settings/pins?done=saved"
        assert loose_order(await overview(server)) == ["loose", "spare"]
        spare = next(
            p["repo"]["id"] for p in (await overview(server))["pinned_repos"]
            if p["repo"]["name"] == "spare"
        )  # fmt: skip
        assert (await act(owner, {"action": "up", "repo_id": str(spare)})).status == 303
        body = await overview(server)
        assert loose_order(body) == ["spare", "loose"]
        # the other pins kept their groups: every entry of the reorder carries its group
        groups = {p["repo"]["name"]: p["group_id"] for p in body["pinned_repos"]}
        named = {g["id"]: g["name"] for g in body["pinned_groups"]}
        assert named[groups["open"]] == "Featured" and named[groups["secret"]] == "Hidden"
        featured = next(g for g, n in named.items() if n == "Featured")
        move = {"action": "move", "repo_id": str(spare), "group_id": str(featured)}
        assert (await act(owner, move)).status == 303
        body = await overview(server)
        assert [p["repo"]["name"] for p in body["pinned_repos"] if p["group_id"] == featured] == [
            "open",
            "spare",
        ]
        assert (await act(owner, {"action": "unpin", "repo_name": "spare"})).status == 303
        assert "spare" not in [p["repo"]["name"] for p in (await overview(server))["pinned_repos"]]


async def test_groups_are_created_renamed_collapsed_moved_and_deleted(server, db, settings):
    async with await as_user(server, db, settings, "owner") as owner:
        assert (await act(owner, {"action": "create_group", "name": "Tools"})).status == 303
        groups = (await overview(server))["pinned_groups"]
        tools = next(g for g in groups if g["name"] == "Tools")
        gid = str(tools["id"])
        assert [g["name"] for g in groups] == ["Featured", "Hidden", "Tools"]
        assert (await act(owner, {"action": "group_up", "group_id": gid})).status == 303
        groups = (await overview(server))["pinned_groups"]
        assert [g["name"] for g in groups] == ["Featured", "Tools", "Hidden"]
        rename = {"action": "rename_group", "group_id": gid, "name": "Tooling"}
        assert (await act(owner, rename)).status == 303
        assert (await act(owner, {"action": "collapse_group", "group_id": gid})).status == 303
        group = next(g for g in (await overview(server))["pinned_groups"] if g["id"] == tools["id"])
        assert (group["name"], group["collapsed"]) == ("Tooling", True)
        assert (await act(owner, {"action": "delete_group", "group_id": gid})).status == 303
        assert "Tooling" not in [g["name"] for g in (await overview(server))["pinned_groups"]]


@pytest.mark.parametrize(
    ("fields", "field", "status", "words"),
    [
        ({"action": "pin", "repo_name": "nope"}, "repo_name", 404, "not found"),
        ({"action": "pin", "repo_name": "open"}, "repo_name", 422, "already pinned"),
        ({"action": "pin", "repo_name": " "}, "repo_name", 422, "required"),
        ({"action": "create_group", "name": " "}, "name", 422, "must not be empty"),
        ({"action": "create_group", "name": "x" * 101}, "name", 422, "at most 100"),
    ],
)
async def test_errors_are_words_next_to_the_field(
    server, db, settings, fields, field, status, words
):
    async with await as_user(server, db, settings, "owner") as owner:
        _, page = await owner.get("/pub/settings/pins")
        async with owner.session.post(
            owner.url("/pub/settings/pins"),
            data={"_csrf": csrf_of(page), **fields},
            headers={"Origin": owner.origin},
            allow_redirects=False,
        ) as reply:
            assert reply.status == status
            html = await reply.text()
    shown = html.split(f'id="{field}-error">', 1)[1].split("<", 1)[0]
    assert words in shown.lower()


async def test_own_public_membership_is_toggled(server, db, settings):
    async with await as_user(server, db, settings, "owner") as owner:
        _, page = await owner.get("/pub/settings/pins")
        assert "Make my membership private" in page
        assert (await act(owner, {"action": "conceal"})).status == 303
        members = await server.get("/api/v1/orgs/pub/public_members/roles")
        assert "olive" not in [m["user"]["login"] for m in await members.json()]
        assert (await act(owner, {"action": "publicize"})).status == 303
        members = await server.get("/api/v1/orgs/pub/public_members/roles")
        assert "olive" in [m["user"]["login"] for m in await members.json()]


@pytest.mark.parametrize(
    ("org", "role", "status"),
    [
        ("pub", "anonymous", 401),
        # anonymous: "sign in" before anything is looked up, so it says nothing about the org
        ("priv", "anonymous", 401),
        ("nobody", "anonymous", 401),
        ("pub", "stranger", 403),
        ("priv", "stranger", 404),
        ("pub", "member", 403),
        ("priv", "member", 403),
        ("nobody", "owner", 404),
        ("pub", "admin", 200),
    ],
)
async def test_the_page_answers_by_the_apis_access_and_writes_nothing_without_it(
    server, db, settings, org, role, status
):
    before = await db.fetchval("SELECT count(*) FROM orgs.pins")
    async with await as_user(server, db, settings, role) as browser:
        got, html = await browser.get(f"/{org}/settings/pins")
        assert got == status and "<html" in html
        _, home = await browser.get("/pub")
        reply = await browser.post(
            f"/{org}/settings/pins",
            {"_csrf": csrf_of(home), "action": "pin", "repo_name": "spare"},
        )
        assert reply.status == (303 if status == 200 else status)
    if status != 200:
        assert await db.fetchval("SELECT count(*) FROM orgs.pins") == before


async def test_a_post_without_the_token_is_refused(server, db, settings):
    async with await as_user(server, db, settings, "owner") as owner:
        reply = await owner.post("/pub/settings/pins", {"action": "pin", "repo_name": "spare"})
        assert reply.status == 403
        reply = await owner.post(
            "/pub/settings/pins",
            {"_csrf": "0" * 64, "action": "pin", "repo_name": "spare"},
        )
        assert reply.status == 403


@pytest.mark.parametrize(
    ("role", "shown"),
    [
        ("owner", True),
        ("admin", True),
        ("member", False),
        ("stranger", False),
        ("anonymous", False),
    ],
)
async def test_the_organization_page_links_the_pins_page_only_for_who_may_manage_pins(
    server, db, settings, role, shown
):
    async with await as_user(server, db, settings, role) as browser:
        status, html = await browser.get("/pub")
        assert status == 200
        assert ('href="/pub/settings/pins"' in html) is shown
