"""A user's profile page `/{user}` (docs/pages.md): the repositories the viewer may read and the
public memberships of organizations the viewer may see, for every privacy class; a name that is
nobody's answers like a hidden organization."""

from __future__ import annotations

import re
from typing import Any

import pytest
from forge_common.accounts.sessions import start_session
from forge_orgs.service import create_app

VIEWERS = {
    "anonymous": None,
    "stranger": "stan",
    "collaborator": "cole",
    "team member": "tess",
    "org member": "mia",
    "owner": "uma",
    "site admin": "ada",
}
EVERYONE = {"uma-tool"}
# what each viewer may read among uma's repositories, and which of her organizations they see
REPOS = {
    "anonymous": EVERYONE,
    "stranger": EVERYONE,
    "collaborator": EVERYONE | {"uma-private"},
    "team member": EVERYONE,
    "org member": EVERYONE,
    "owner": EVERYONE | {"uma-private", "uma-secret"},
    "site admin": EVERYONE | {"uma-private", "uma-secret"},
}
ORGS = {
    "anonymous": {"pubco"},
    "stranger": {"pubco", "limco"},
    "collaborator": {"pubco", "limco"},
    "team member": {"pubco", "limco", "hideco"},
    "org member": {"pubco", "limco", "hideco"},
    "owner": {"pubco", "limco", "hideco"},
    "site admin": {"pubco", "limco", "hideco"},
}


def world() -> dict[str, Any]:
    users = [
        {"name": login, "full_name": login.title(), "admin": login == "ada"}
        for login in ("uma", "stan", "cole", "tess", "mia", "ada")
    ]

    def org(name: str, visibility: str) -> dict[str, Any]:
        return {
            "name": name,
            "visibility": visibility,
            "members": [
                {"user": "uma", "public": True},
                {"user": "mia", "public": False},
                {"user": "tess"},
            ],
            "teams": [{"name": "t", "permission": "read", "members": ["tess"], "repos": []}],
        }

    orgs = [org("pubco", "public"), org("limco", "limited"), org("hideco", "private")]
    orgs.append({"name": "quietco", "members": [{"user": "uma", "public": False}]})
    repos = [
        {"owner": "uma", "name": "uma-tool"},
        {
            "owner": "uma",
            "name": "uma-private",
            "private": True,
            "collaborators": [{"user": "cole", "permission": "read"}],
        },
        {"owner": "uma", "name": "uma-secret", "private": True},
    ]
    return {"users": users, "orgs": orgs, "repos": repos}


@pytest.fixture
async def profile(aiohttp_client: Any, settings: Any, load: Any, db: Any) -> Any:
    await load(world())
    client = await aiohttp_client(create_app(settings))
    cookies = {}
    for role, login in VIEWERS.items():
        if login is None:
            cookies[role] = {}
            continue
        user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = $1", login)
        cookies[role] = {"Cookie": f"forge_session={await start_session(db, settings, user_id)}"}
    return client, cookies


def _main(html: str) -> str:
    return html.split("<main", 1)[1].split("</main>", 1)[0]


@pytest.mark.parametrize("role", list(VIEWERS))
async def test_a_profile_shows_what_each_viewer_may_see(profile, role):
    client, cookies = profile
    reply = await client.get("/uma", headers=cookies[role])
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("text/html")
    html = _main(await reply.text())
    repos = set(re.findall(r'<h3><a href="http://forge.test/uma/([^"]+)">', html))
    orgs = set(re.findall(r'<li><a href="http://forge.test/(\w+)">', html))
    assert repos == REPOS[role]
    assert orgs == ORGS[role]
    assert "quietco" not in html  # a concealed membership never shows
    cache = reply.headers["Cache-Control"]
    assert cache == "public, no-cache" if role == "anonymous" else cache.startswith("private")


async def test_a_name_that_is_nobody_answers_like_a_hidden_organization(profile):
    client, _ = profile
    nobody = await client.get("/nobody-at-all")
    hidden = await client.get("/hideco")
    assert nobody.status == hidden.status == 404
    assert _main(await nobody.text()) == _main(await hidden.text())


async def test_organization_pages_still_win_over_profiles(profile):
    client, _ = profile
    html = await (await client.get("/pubco")).text()
    assert "At a glance" in html


async def test_a_bad_avatar_name_is_an_html_404(profile):
    client, _ = profile
    reply = await client.get("/avatars/..bad")
    assert reply.status == 404 and reply.headers["Content-Type"].startswith("text/html")


async def test_a_profile_refuses_a_post_with_an_html_405(profile):
    client, _ = profile
    reply = await client.post("/uma", data={"x": "1"})
    assert reply.status == 405 and reply.headers["Content-Type"].startswith("text/html")
