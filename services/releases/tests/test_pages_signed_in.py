"""Pages seen through a browser session (docs/accounts.md "Sessions"): a signed-in visitor sees
exactly what the API shows their token, on every page, for every caller and repository kind;
their pages are never shared-cacheable; the start page (docs/pages.md) lists what every visitor
may see, and a signed-in visitor's own repositories."""

from __future__ import annotations

import re
from typing import Any

import pytest
from forge_common.accounts import tokens
from forge_common.accounts.sessions import start_session

from .support import CALLERS, REPO_KINDS, access_world, auth
from .test_pages import PAGES, _main

SIGNED_IN = [caller for caller in CALLERS if caller != "anonymous"] + ["owner"]


async def _session_cookie(db: Any, settings: Any, login: str) -> dict[str, str]:
    user_id = await db.fetchval("SELECT id FROM core.accounts WHERE name = $1", login)
    return {"Cookie": f"forge_session={await start_session(db, settings, user_id)}"}


@pytest.fixture
async def signed_in(make_client: Any, load: Any, db: Any, settings: Any) -> Any:
    await load(access_world())
    client = await make_client()
    cookies = {login: await _session_cookie(db, settings, login) for login in SIGNED_IN}
    return client, cookies


@pytest.mark.parametrize("name", sorted(PAGES))
async def test_a_session_sees_what_its_users_token_sees(signed_in, name):
    client, cookies = signed_in
    page, _ = PAGES[name]
    for repo in REPO_KINDS:
        for caller in SIGNED_IN:
            path = page.format(repo=repo)
            by_token = await client.get(path, headers=auth(caller) if caller in CALLERS else {})
            by_session = await client.get(path, headers=cookies[caller])
            if caller == "owner":  # no token in CALLERS: compare with the owner's token
                by_token = await client.get(path, headers={"Authorization": "token owner-token"})
            assert by_session.status == by_token.status, (repo, caller)
            token_html, session_html = await by_token.text(), await by_session.text()
            assert _without_console(_main(session_html)) == _spaced(_main(token_html)), (
                repo,
                caller,
            )
            # the header names the signed-in visitor, with a sign-out form bound to the session
            assert f">{caller}</a>" in session_html and 'action="/user/logout"' in session_html
            assert by_session.headers["Cache-Control"].startswith("private")
            assert "Cookie" in by_session.headers["Vary"]


def _without_console(html: str) -> str:
    """The console's links (new release, insights, settings, each release's edit link) and its
    publisher section, which only a signed-in browser gets (its forms need the session:
    docs/console.md), are the one part a token's page lacks."""
    html = re.sub(
        r'<section aria-labelledby="publisher-heading".*?</section>\n?', "", html, flags=re.S
    )
    return _spaced(re.sub(r'<p><a class="console-link".*?</p>\n?', "", html))


def _spaced(html: str) -> str:
    """`html` with each run of white space as one space: a console link left out of a page (the
    edit link of each release on the releases page) leaves its line's indentation behind."""
    return re.sub(r"\s+", " ", html)


async def test_a_session_sees_drafts_where_its_token_would(signed_in):
    client, cookies = signed_in
    path = "/owner/pub/releases?drafts=true"
    stranger = _main(await (await client.get(path, headers=cookies["stranger"])).text())
    admin = _main(await (await client.get(path, headers=cookies["repoadmin"])).text())
    assert "v2.0.0" not in stranger and "v2.0.0" in admin


async def test_an_unknown_or_junk_session_cookie_is_anonymous(signed_in):
    client, _ = signed_in
    for cookie in ("forge_session=nope", "forge_session=" + "x" * 500, "forge_session="):
        reply = await client.get("/owner/priv", headers={"Cookie": cookie})
        assert reply.status == 401  # anonymous: the sign-in link, never a 500
        assert 'href="/user/login?redirect_to=/owner/priv"' in await reply.text()


async def test_a_signed_in_download_page_is_never_kept_for_anonymous_visitors(signed_in):
    client, cookies = signed_in
    anonymous = await (await client.get("/owner/pub/download")).text()
    signed = await (await client.get("/owner/pub/download", headers=cookies["reader"])).text()
    again = await (await client.get("/owner/pub/download")).text()
    assert ">reader</a>" in signed and ">reader</a>" not in again and anonymous == again


async def test_a_page_refuses_other_methods_with_an_html_405(signed_in):
    client, _ = signed_in
    for path in ("/owner/pub", "/owner/pub/releases", "/owner/pub/download", "/"):
        reply = await client.post(path, data={"x": "1"})
        assert reply.status == 405, path
        assert reply.headers["Content-Type"].startswith("text/html"), path
        assert "GET" in reply.headers["Allow"]
    api = await client.put("/api/v2/repos/owner/pub/releases")
    assert api.status == 405 and api.headers["Content-Type"].startswith("application/json")


def _start_world() -> dict[str, Any]:
    release = {"tag": "v1.0.0", "created_at": "2026-01-01T00:00:00Z"}
    draft = {"tag": "v9.0.0", "draft": True, "created_at": "2026-02-01T00:00:00Z"}
    beta = {"tag": "v2.0.0-beta", "prerelease": True, "created_at": "2026-01-15T00:00:00Z"}

    def org(name: str, visibility: str) -> dict[str, Any]:
        return {
            "name": name,
            "visibility": visibility,
            "members": [{"user": "mia", "public": True}],
        }

    acme = org("acme", "public")
    acme["members"] += [{"user": "olive", "owner": True}, {"user": "tess"}]
    acme["teams"] = [
        {"name": "devs", "permission": "read", "members": ["tess"], "repos": ["secret-app"]}
    ]

    repos = [
        {"owner": "acme", "name": "app", "releases": [release, draft, beta]},
        {"owner": "acme", "name": "secret-app", "private": True, "releases": [release]},
        {"owner": "limco", "name": "limapp"},
        {"owner": "hidden", "name": "hiddenapp"},
        {"owner": "stan", "name": "stan-tool"},
        # a public repository of a private organization, with a collaborator outside it
        {
            "owner": "closed",
            "name": "closed-app",
            "releases": [release],
            "collaborators": [{"user": "cole", "permission": "write"}],
        },
        {
            "owner": "stan",
            "name": "stan-private",
            "private": True,
            "collaborators": [{"user": "cole", "permission": "read"}],
        },
    ]
    names = ("mia", "stan", "cole", "nobody", "olive", "tess", "ada")
    users = [{"name": n, "tokens": [f"{n}-token"], "admin": n == "ada"} for n in names]
    closed = {
        "name": "closed",
        "visibility": "private",
        "members": [{"user": "olive", "owner": True}],
    }
    orgs = [acme, org("limco", "limited"), org("hidden", "private"), closed]
    return {"users": users, "orgs": orgs, "repos": repos}


@pytest.fixture
async def start(make_client: Any, load: Any, db: Any, settings: Any) -> Any:
    await load(_start_world())
    client = await make_client()
    logins = ("mia", "cole", "nobody", "olive", "tess", "ada")
    cookies = {n: await _session_cookie(db, settings, n) for n in logins}
    return client, cookies


def _cards(html: str) -> list[str]:
    return re.findall(r'<h3><a href="[^"]+">([^<]+)</a></h3>', html)


async def test_the_start_page_shows_public_things_alike_to_everyone(start):
    client, _ = start
    reply = await client.get("/")
    html = _main(await reply.text())
    assert reply.status == 200 and reply.headers["Cache-Control"] == "public, no-cache"
    assert sorted(_cards(html)) == ["acme", "acme/app", "stan/stan-tool"]
    # the latest release as the latest API gives it: no draft, no prerelease
    assert "v1.0.0" in html and "v9.0.0" not in html and "v2.0.0-beta" not in html
    assert 'href="/user/login"' in html
    for hidden in ("secret-app", "limco", "limapp", "hidden", "stan-private", "closed"):
        assert hidden not in html


@pytest.mark.parametrize(
    ("login", "mine"),
    [
        # a plain member reads the public repositories of her organizations, not the private ones
        ("mia", ["acme/app", "hidden/hiddenapp", "limco/limapp"]),
        # a collaborator; not of closed/closed-app, whose private organization he is outside
        ("cole", ["stan/stan-private"]),
        ("tess", ["acme/app", "acme/secret-app"]),  # a team member
        ("olive", ["acme/app", "acme/secret-app", "closed/closed-app"]),  # the owner
        ("ada", []),  # a site admin may read everything, and belongs to nothing
        ("nobody", []),
    ],
)
async def test_the_start_page_lists_a_signed_in_visitors_own_repositories(start, login, mine):
    client, cookies = start
    reply = await client.get("/", headers=cookies[login])
    html = _main(await reply.text())
    assert reply.status == 200 and reply.headers["Cache-Control"].startswith("private")
    section = html.split('id="orgs-heading"')[0]
    assert sorted(_cards(section)) == mine
    # the same through the visitor's token
    by_token = await client.get("/", headers={"Authorization": f"token {login}-token"})
    assert sorted(_cards(_main(await by_token.text()).split('id="orgs-heading"')[0])) == mine


async def test_a_collaborator_outside_a_private_organization_sees_nothing_of_it(start):
    """docs/access.md "Access levels" 0: the start page agrees with every route."""
    client, cookies = start
    for headers in (cookies["cole"], {"Authorization": "token cole-token"}):
        html = (await (await client.get("/", headers=headers)).text()).split("<footer")[0]
        assert "closed" not in html
        for path in (
            "/closed/closed-app",
            "/closed/closed-app/releases/tag/v1.0.0",
            "/api/v2/repos/closed/closed-app/releases",
            "/closed",
        ):
            assert (await client.get(path, headers=headers)).status == 404, path


async def test_a_signed_in_browser_downloads_the_files_its_pages_link_to(signed_in):
    client, cookies = signed_in
    page = await client.get("/owner/priv/releases/tag/v1.0.0", headers=cookies["reader"])
    link = re.search(
        r'href="http://forge.test(/owner/priv/releases/download/[^"]+)"', await page.text()
    )
    assert link, "the release page links its files"
    assert (await client.get(link.group(1))).status == 401  # anonymous
    assert (await client.get(link.group(1), headers=cookies["stranger"])).status == 404
    reply = await client.get(link.group(1), headers=cookies["reader"])
    assert reply.status == 200 and reply.headers["Cache-Control"].startswith("private")
    # the JSON API still never reads the session
    api = await client.get("/api/v2/repos/owner/priv/releases", headers=cookies["reader"])
    assert api.status == 401


@pytest.mark.parametrize(
    ("granted", "missing"),
    [
        (("read:user",), "read:repository"),
        (("write:release",), "read:repository"),
        (("read:repository",), "read:organization"),
        (("read:repository", "read:organization"), "read:user"),
    ],
)
async def test_a_token_reads_a_page_only_with_the_scopes_of_what_pages_show(
    signed_in: Any, db: Any, granted: tuple[str, ...], missing: str
) -> None:
    """A page shows what the API shows the same token, so it holds the token to the API's scopes:
    a `read:user` token read a private repository's pages that the release API refused it. 403
    before anything is looked up, alike for every repository and page, like the API's."""
    client, _ = signed_in
    owner = await db.fetchval("SELECT id FROM core.accounts WHERE name = 'owner'")
    made = await tokens.create_token(db, owner, "narrow", granted)
    assert made is not None
    narrow = {"Authorization": f"token {made[1]}"}
    for repo in REPO_KINDS:
        for page, _ in PAGES.values():
            resp = await client.get(page.format(repo=repo), headers=narrow)
            assert resp.status == 403, (repo, page)
            assert f"[{missing}]" in await resp.text()
    for path in ("/", "/nobody/nothing"):
        assert (await client.get(path, headers=narrow)).status == 403, path
    wide = await tokens.create_token(
        db, owner, "wide", ("read:repository", "read:organization", "read:user")
    )
    assert wide is not None
    resp = await client.get("/owner/priv", headers={"Authorization": f"token {wide[1]}"})
    assert resp.status == 200
