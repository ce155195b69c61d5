"""Who reaches the release console (docs/console.md "Access"): every console URL, read and
posted, for every kind of caller on every kind of repository. Whoever may not see the repository
gets the API's answer (404, or 401 to an anonymous visitor where the API gives it), whoever may
see it but not act 403, and nothing is written; console links are shown only to those who may
act."""

from __future__ import annotations

from typing import Any

import pytest
from forge_testing.browser import csrf_of

from .console_support import signed_in
from .publish_support import outbox, publish_world

WRITE_GETS = ("releases/new", "releases/edit/v1.0.0", "releases/edit/v1.0.0/unpublish")
ADMIN_GETS = ("settings", "settings/update-keys", "settings/tauri-key")
WRITE_POSTS = (
    "releases/new",
    "releases/edit/v1.0.0",
    "releases/edit/v1.0.0/assets",
    "releases/edit/v1.0.0/assets/delete",
    "releases/edit/v1.0.0/rollout",
    "releases/edit/v1.0.0/unpublish",
)
ADMIN_POSTS = (
    "settings",
    "settings/update-keys",
    "settings/update-keys/revoke",
    "settings/tauri-key",
)
# (repository, caller) → the status of a console URL that needs write / admin access
EXPECTED = {
    ("pub", "anonymous"): (401, 401),
    ("pub", "stranger"): (403, 403),
    ("pub", "reader"): (403, 403),
    ("pub", "writer"): (200, 403),
    ("pub", "repoadmin"): (200, 200),
    ("priv", "anonymous"): (401, 401),
    ("priv", "stranger"): (404, 404),
    ("priv", "reader"): (403, 403),
    ("priv", "writer"): (200, 403),
    ("relpub", "stranger"): (403, 403),
    ("relpub", "reader"): (403, 403),
    ("old", "writer"): (200, 403),  # archived: the pages show, a write is refused (below)
}


@pytest.fixture
async def world(make_client: Any, load: Any) -> Any:
    await load(publish_world())
    return await make_client()


async def _written(db: Any) -> tuple[Any, ...]:
    return (
        await db.fetchval("SELECT count(*) FROM releases.releases"),
        await db.fetchval("SELECT count(*) FROM releases.update_keys"),
        await db.fetchval("SELECT count(*) FROM releases.signing_keys"),
        await db.fetchval(
            "SELECT array_agg((private, public_landing, public_releases) ORDER BY id) "
            "FROM core.repositories"
        ),
        await db.fetchval(
            "SELECT array_agg((tag, draft, rollout) ORDER BY id) FROM releases.releases"
        ),
    )


async def test_every_console_url_answers_by_access_and_writes_nothing_without_it(
    world: Any, db: Any, settings: Any
) -> None:
    """One world for the whole table (nothing in it changes): every (repository, caller)."""
    before = await _written(db)
    events = len(await outbox(db))
    for repo, caller in sorted(EXPECTED):
        await _check(world, db, settings, repo, caller)
    assert await _written(db) == before
    assert len(await outbox(db)) == events


async def _check(world: Any, db: Any, settings: Any, repo: str, caller: str) -> None:
    write_status, admin_status = EXPECTED[(repo, caller)]
    async with await signed_in(world, db, settings, caller) as browser:
        _, home = await browser.get("/owner/pub/releases")
        token = csrf_of(home)  # the session's token, from the sign-out form of any page
        assert (caller == "anonymous") == (token == "")
        for suffix, want in [(s, write_status) for s in WRITE_GETS] + [
            (s, admin_status) for s in ADMIN_GETS
        ]:
            status, html = await browser.get(f"/owner/{repo}/{suffix}")
            assert status == want, (repo, caller, suffix, status)
            assert "<html" in html  # a page, never JSON or a traceback
        for suffix, want in [(s, write_status) for s in WRITE_POSTS] + [
            (s, admin_status) for s in ADMIN_POSTS
        ]:
            if want == 200:
                continue  # the forms of those who may act: test_console_releases, _keys
            data = {
                "_csrf": token,
                "tag_name": "v9.0.0",
                "action": "publish",
                "rollout": "100",
                "asset_id": "1",
                "id": "1",
                "name": "k",
                "visibility": "public",
            }
            reply = await browser.post(f"/owner/{repo}/{suffix}", data)
            assert reply.status == want, (repo, caller, suffix, reply.status)


async def test_an_archived_repository_refuses_console_writes(
    world: Any, db: Any, settings: Any
) -> None:
    async with await signed_in(world, db, settings, "writer") as browser:
        _, html = await browser.get("/owner/old/releases/new")
        data = {"tag_name": "v9.0.0", "action": "draft"}
        reply = await browser.submit("/owner/old/releases/new", data, page=html)
        assert reply.status == 403
    assert await db.fetchval("SELECT count(*) FROM releases.releases WHERE tag = 'v9.0.0'") == 0


@pytest.mark.parametrize("caller", ["anonymous", "stranger", "reader", "writer", "repoadmin"])
async def test_console_links_only_for_those_who_may_act(
    world: Any, db: Any, settings: Any, caller: str
) -> None:
    may_publish = caller in ("writer", "repoadmin")
    async with await signed_in(world, db, settings, caller) as browser:
        _, listing = await browser.get("/owner/pub/releases")
        _, release = await browser.get("/owner/pub/releases/tag/v1.0.0")
    assert ("/owner/pub/releases/new" in listing) == may_publish
    assert ("/owner/pub/settings" in listing) == (caller == "repoadmin")
    assert ("/owner/pub/releases/edit/v1.0.0" in release) == may_publish
    assert ("Raise rollout" in release) is False  # v1.0.0 goes to everyone: nothing to raise
    assert "console-link" not in listing + release or may_publish


async def test_a_token_caller_sees_no_console_link_and_cannot_post_forms(
    world: Any, db: Any
) -> None:
    headers = {"Authorization": "token writer-token"}
    listing = await world.get("/owner/pub/releases", headers=headers)
    assert "/releases/new" not in await listing.text()
    reply = await world.post(
        "/owner/pub/releases/new",
        data={"tag_name": "v9.0.0", "action": "draft"},
        headers={**headers, "Origin": str(world.make_url("/").origin())},
    )
    assert reply.status == 403  # no session: no CSRF token can match
    assert await db.fetchval("SELECT count(*) FROM releases.releases WHERE tag = 'v9.0.0'") == 0


async def test_a_hidden_organizations_console_is_404_to_outsiders(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    """A private organization does not exist for outsiders, anonymous or signed in: the console
    says 404 on every URL, read or posted, as the API does (docs/access.md)."""
    await load(
        {
            "users": [{"name": "insider"}, {"name": "outsider"}],
            "orgs": [
                {
                    "name": "hush",
                    "visibility": "private",
                    "members": [{"user": "insider", "owner": True}],
                }
            ],
            "repos": [
                {
                    "owner": "hush",
                    "name": "app",
                    "releases": [{"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z"}],
                }
            ],
        }
    )
    client = await make_client()
    for caller, want in (("anonymous", 404), ("outsider", 404), ("insider", 200)):
        async with await signed_in(client, db, settings, caller) as browser:
            for suffix in WRITE_GETS + ADMIN_GETS:
                status, _ = await browser.get(f"/hush/app/{suffix}")
                assert status == want, (caller, suffix, status)
            if want == 200:
                continue
            for suffix in WRITE_POSTS + ADMIN_POSTS:
                reply = await browser.post(f"/hush/app/{suffix}", {"tag_name": "v9"})
                assert reply.status == want, (caller, suffix, reply.status)
    assert await db.fetchval("SELECT count(*) FROM releases.releases") == 1
