"""The Gitea-shaped account administration of the orgs service (docs/accounts.md): users, the
signed-in user, organizations, repositories, teams, members and tokens, against the real
database; every privacy class for every read; hidden organizations answer writes exactly as
missing ones; scopes are enforced with Gitea's message; events reach the outbox."""

from __future__ import annotations

from typing import Any

import pytest
from forge_common.accounts import sign_in_throttle
from forge_common.accounts.passwords import hash_password_sync
from forge_orgs.service import create_app

from .accounts_support import basic
from .conftest import TOKENS, world
from .openapi_check import Api

PASSWORD = "correct-horse-battery"
_HASH = hash_password_sync(PASSWORD)  # argon2 once per module, not once per test


def _world() -> dict[str, Any]:
    """conftest's world, plus a collaborator (colin, on every organization's `vault`, no member)
    and a team member (tess, in team `devs` of each organization, so a member of each)."""
    data = world()
    for login in ("colin", "tess"):
        data["users"].append({"name": login, "tokens": [f"{login}-token"]})
    for repo in data["repos"]:
        if repo["name"] == "vault":
            repo["collaborators"] = [{"user": "colin", "permission": "write"}]
    for org in data["orgs"]:
        org["members"].append({"user": "tess"})
        org["teams"][0]["members"].append("tess")
        org["teams"][0]["repos"] = ["vault"]
    return data


ROLES = {**TOKENS, "collaborator": "colin-token", "team": "tess-token"}
CLASSES = ["anonymous", "stranger", "member", "collaborator", "team", "owner", "admin"]


@pytest.fixture
async def acct(aiohttp_client: Any, settings: Any, load: Any, db: Any) -> Api:
    await load(_world())
    await db.execute("UPDATE core.accounts SET password_hash = $1 WHERE kind = 'user'", _HASH)
    return Api(await aiohttp_client(create_app(settings)), ROLES)


def _as(role: str) -> str | None:
    return None if role == "anonymous" else role


# --- reads: every privacy class ------------------------------------------------------------

# GET /orgs/{org}/teams: token first (401), then the organization (404 when hidden), then
# membership (403): a collaborator is no member, a team member always is one.
_TEAMS = {
    "pub": {
        "anonymous": 401,
        "stranger": 403,
        "member": 200,
        "collaborator": 403,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    "lim": {
        "anonymous": 401,
        "stranger": 403,
        "member": 200,
        "collaborator": 403,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    "priv": {
        "anonymous": 401,
        "stranger": 404,
        "member": 200,
        "collaborator": 404,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    "nosuch": {
        "anonymous": 401,
        "stranger": 404,
        "member": 404,
        "collaborator": 404,
        "team": 404,
        "owner": 404,
        "admin": 404,
    },
}


async def test_teams_list_answers_every_privacy_class(acct: Api) -> None:
    bodies = {}
    for org, expected in _TEAMS.items():
        for role in CLASSES:
            reply = await acct.get(f"/orgs/{org}/teams", as_=_as(role))
            assert reply.status == expected[role], (org, role, reply.raw)
            if reply.status == 404:
                bodies[(org, role)] = reply.raw
            if reply.status == 200:
                assert [t["name"] for t in reply.json] == ["devs"]
                assert reply.json[0]["organization"]["name"] == org
    # docs/access.md: a hidden organization answers exactly as one that does not exist
    assert len(set(bodies.values())) == 1


# GET /orgs/{org}: whoever may see the organization (docs/access.md "Seeing an owner")
_ORG = {
    "pub": dict.fromkeys(CLASSES, 200),
    "lim": {**dict.fromkeys(CLASSES, 200), "anonymous": 404},
    "priv": {
        "anonymous": 404,
        "stranger": 404,
        "member": 200,
        "collaborator": 404,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    "nosuch": dict.fromkeys(CLASSES, 404),
}


async def test_organization_and_team_reads_answer_every_privacy_class(acct: Api, db: Any) -> None:
    bodies = set()
    for org, expected in _ORG.items():
        for role in CLASSES:
            reply = await acct.get(f"/orgs/{org}", as_=_as(role))
            assert reply.status == expected[role], (org, role)
            if reply.status == 404:
                bodies.add(reply.raw)
            else:
                assert reply.json["name"] == org and reply.json["username"] == org
    assert len(bodies) == 1
    # GET /teams/{id}: as the team list (members and site admins; hidden is missing)
    for org, expected in _TEAMS.items():
        team_id = (
            await db.fetchval(
                "SELECT t.id FROM core.teams t JOIN core.accounts o ON o.id = t.org_id "
                "WHERE o.name = $1",
                org,
            )
            or 999999
        )
        for role in CLASSES:
            reply = await acct.get(f"/teams/{team_id}", as_=_as(role))
            assert reply.status == expected[role], (org, role)
            if reply.status == 404:
                bodies.add(reply.raw)
    assert (await acct.get("/teams/junk", as_="stranger")).raw in bodies
    assert len(bodies) == 2  # one for organizations, one (Gitea's) for teams
    # users are public; an organization is no user here
    assert (await acct.get("/users/olive")).json["login"] == "olive"
    assert (await acct.get("/users/olive")).json["email"] == ""
    assert (await acct.get("/users/pub")).status == 404


async def test_current_user_is_the_caller_with_private_fields_only_for_them(acct: Api) -> None:
    assert (await acct.get("/user")).status == 401
    assert (await acct.get("/user")).json == {"message": "token is required"}
    for role in CLASSES[1:]:
        reply = await acct.get("/user", as_=role)
        assert reply.status == 200
        assert reply.json["login"] == ROLES[role].removesuffix("-token")
        assert reply.headers["Cache-Control"].startswith("private")
    me = (await acct.get("/user", as_="admin")).json
    assert me["is_admin"] is True and me["username"] == "ada"


# --- users ---------------------------------------------------------------------------------


async def test_site_admin_creates_a_user_others_are_refused_in_gitea_words(
    acct: Api, db: Any
) -> None:
    body = {"username": "newbie", "email": "newbie@example.com", "password": "s3cret-enough"}
    assert (await acct.post("/admin/users", json=body)).status == 401
    refused = await acct.post("/admin/users", as_="owner", json=body)
    assert refused.status == 403
    assert refused.json == {"message": "user should be the site admin"}
    made = await acct.post("/admin/users", as_="admin", json=body)
    assert made.status == 201
    assert await db.fetchval(  # Gitea's API default: the new user changes the password first
        "SELECT must_change_password FROM core.accounts WHERE name = 'newbie'"
    )
    assert made.json["login"] == "newbie" and made.json["email"] == "newbie@example.com"
    again = await acct.post("/admin/users", as_="admin", json={**body, "email": "x@example.com"})
    assert again.status == 422
    assert again.json["message"] == "user already exists [name: newbie]"
    # names are unique across users and organizations, case-insensitively
    org_name = await acct.post(
        "/admin/users", as_="admin", json={**body, "username": "PUB", "email": "p@example.com"}
    )
    assert org_name.status == 422
    short = await acct.post(
        "/admin/users", as_="admin", json={**body, "username": "other", "password": "short"}
    )
    assert short.status == 400
    reserved = await acct.post(
        "/admin/users", as_="admin", json={**body, "username": "api", "email": "a@example.com"}
    )
    assert reserved.json["message"] == "name is reserved [name: api]"
    # the new user signs in with the password (must_change_password is Gitea's default, true:
    # the API still answers, as Gitea's does; the browser asks for a new password)
    me = await acct.get("/user", headers={"Authorization": basic("newbie", "s3cret-enough")})
    assert me.status == 200 and me.json["login"] == "newbie"


async def test_site_admin_edits_and_deletes_users(acct: Api, db: Any) -> None:
    edit = {
        "full_name": "Olive O.",
        "email": "olive@example.com",
        "admin": True,
        "password": "a-new-password",
    }
    assert (await acct.call("PATCH", "/admin/users/olive", as_="owner", json=edit)).status == 403
    assert (await acct.call("PATCH", "/admin/users/nobody", as_="admin", json=edit)).status == 404
    done = await acct.call("PATCH", "/admin/users/olive", as_="admin", json=edit)
    assert done.status == 200
    assert done.json["full_name"] == "Olive O." and done.json["is_admin"] is True
    me = await acct.get("/user", headers={"Authorization": basic("olive", "a-new-password")})
    assert me.status == 200 and me.json["is_admin"] is True
    taken = await acct.call(
        "PATCH", "/admin/users/mia", as_="admin", json={"email": "OLIVE@example.com"}
    )
    assert taken.status == 422
    assert taken.json["message"] == "e-mail already in use [email: OLIVE@example.com]"
    weak = await acct.call("PATCH", "/admin/users/mia", as_="admin", json={"password": "short"})
    assert weak.status == 400
    # Gitea's rules for deleting: repositories only with purge, never the last owner
    await acct.post("/user/repos", as_="stranger", json={"name": "keep"})
    kept = await acct.delete("/admin/users/stan", as_="admin")
    assert kept.status == 422 and "still has ownership of repositories" in kept.json["message"]
    assert (await acct.delete("/admin/users/stan?purge=true", as_="admin")).status == 204
    assert (await acct.get("/users/stan")).status == 404
    assert (await acct.delete("/admin/users/olive", as_="admin")).status == 422  # owns pub, ...
    assert (await acct.delete("/admin/users/colin", as_="member")).status == 403


async def test_password_guessing_is_slowed_per_account_for_every_replica(
    acct: Api, monkeypatch: Any
) -> None:
    monkeypatch.setattr(sign_in_throttle, "PAIR_LIMIT", 2)
    for name in ("olive", "nobody"):  # an account and no account: the same answers
        for _ in range(2):
            reply = await acct.get("/user", headers={"Authorization": basic(name, "guess-1234")})
            assert reply.status == 401
        refused = await acct.get("/user", headers={"Authorization": basic(name, "guess-1234")})
        assert refused.status == 429
        assert 0 < int(refused.headers["Retry-After"]) <= sign_in_throttle.MAX_BLOCK_SECONDS
    # while it lasts, the right password waits too (else guessing would go on); tokens do not
    right = await acct.get("/user", headers={"Authorization": basic("OLIVE", PASSWORD)})
    assert right.status == 429
    assert (await acct.get("/user", as_="owner")).status == 200
    assert (
        await acct.get("/user", headers={"Authorization": basic("mia", PASSWORD)})
    ).status == 200


async def test_wrong_passwords_and_unknown_users_answer_alike(acct: Api) -> None:
    wrong = await acct.get("/user", headers={"Authorization": basic("olive", "wrong-password")})
    missing = await acct.get("/user", headers={"Authorization": basic("nobody", "wrong-password")})
    assert wrong.status == missing.status == 401
    assert wrong.raw == missing.raw
    junk = await acct.get("/user", headers={"Authorization": "Basic !!!"})
    assert junk.status == 401


# --- organizations and repositories --------------------------------------------------------


async def test_a_user_creates_an_organization_and_owns_it(acct: Api, db: Any) -> None:
    made = await acct.post(
        "/orgs",
        as_="stranger",
        json={"username": "newco", "visibility": "private", "full_name": "New Co"},
    )
    assert made.status == 201
    assert made.json["name"] == "newco" and made.json["visibility"] == "private"
    # the creator owns it: may create repositories and teams, sees it; others do not
    assert (await acct.get("/orgs/newco/teams", as_="stranger")).status == 200
    assert (await acct.get("/orgs/newco/teams", as_="member")).status == 404
    taken = await acct.post("/orgs", as_="member", json={"username": "NEWCO"})
    assert taken.status == 422
    bad = await acct.post("/orgs", as_="member", json={"username": "x", "visibility": "secret"})
    assert bad.status == 422
    assert (await acct.post("/orgs", json={"username": "anon"})).status == 401
    events = await db.fetch(
        "SELECT type, payload FROM core.outbox WHERE type <> 'audit.recorded' "
        "ORDER BY occurred_at, type"
    )
    assert [e["type"] for e in events] == ["org.created", "org.member.added"]


async def test_repositories_of_users_and_organizations(acct: Api, db: Any) -> None:
    mine = await acct.post("/user/repos", as_="member", json={"name": "tool", "private": True})
    assert mine.status == 201
    assert mine.json["full_name"] == "mia/tool" and mine.json["private"] is True
    assert mine.json["owner"]["login"] == "mia"
    dup = await acct.post("/user/repos", as_="member", json={"name": "TOOL"})
    assert dup.status == 409
    assert dup.json == {"message": "The repository with the same name already exists."}
    bad = await acct.post("/user/repos", as_="member", json={"name": "a/b"})
    assert bad.status == 422
    org_repo = await acct.post(
        "/orgs/pub/repos",
        as_="owner",
        json={"name": "desktop", "public_releases": True, "private": True},
    )
    assert org_repo.status == 201 and org_repo.json["public_releases"] is True
    member = await acct.post("/orgs/pub/repos", as_="member", json={"name": "nope"})
    assert member.status == 403
    assert member.json == {
        "message": "Given user is not allowed to create repository in organization."
    }
    types = [
        r["type"]
        for r in await db.fetch("SELECT type FROM core.outbox WHERE type <> 'audit.recorded'")
    ]
    assert types.count("repository.created") == 2


async def test_hidden_organizations_answer_writes_as_missing_ones(acct: Api) -> None:
    """A stranger writing to a private organization learns nothing: the same status and body as
    for an organization that does not exist, whatever the body says."""
    writes = [
        ("POST", "/orgs/{org}/repos", {"name": "x"}),
        ("POST", "/orgs/{org}/repos", {"name": "vault"}),
        ("POST", "/orgs/{org}/teams", {"name": "devs"}),
        ("DELETE", "/orgs/{org}/members/mia", None),
        ("DELETE", "/orgs/{org}/members/nobody", None),
    ]
    for method, template, body in writes:
        hidden = await acct.call(method, template.format(org="priv"), as_="stranger", json=body)
        missing = await acct.call(method, template.format(org="nosuch"), as_="stranger", json=body)
        assert hidden.status == missing.status == 404, (method, template)
        assert hidden.raw == missing.raw


# --- teams and members ---------------------------------------------------------------------


async def test_teams_members_and_repositories(acct: Api, db: Any) -> None:
    made = await acct.post(
        "/orgs/priv/teams",
        as_="owner",
        json={"name": "release", "description": "ships", "permission": "write"},
    )
    assert made.status == 201
    team = made.json
    assert team["permission"] == "write" and team["organization"]["name"] == "priv"
    same = await acct.post("/orgs/priv/teams", as_="owner", json={"name": "RELEASE"})
    assert same.status == 422
    assert (await acct.post("/orgs/priv/teams", as_="member", json={"name": "x"})).json == {
        "message": "Must be an organization owner"
    }
    # Gitea 1.2x clients send units_map instead of permission
    mapped = await acct.post(
        "/orgs/priv/teams",
        as_="owner",
        json={"name": "ops", "units_map": {"repo.releases": "admin", "repo.code": "read"}},
    )
    assert mapped.json["permission"] == "admin"
    tid = team["id"]
    # the stranger joins the team, and with it the organization: the private org appears
    assert (await acct.get("/orgs/priv/teams", as_="stranger")).status == 404
    assert (await acct.put(f"/teams/{tid}/members/stan", as_="owner")).status == 204
    assert (await acct.put(f"/teams/{tid}/members/stan", as_="owner")).status == 204  # again
    assert (await acct.get("/orgs/priv/teams", as_="stranger")).status == 200
    assert (await acct.put(f"/teams/{tid}/repos/priv/vault", as_="owner")).status == 204
    level = await db.fetchval(
        """SELECT t.permission FROM core.team_repos tr JOIN core.teams t ON t.id = tr.team_id
            JOIN core.team_members m ON m.team_id = t.id JOIN core.accounts a ON a.id = m.user_id
           WHERE a.name = 'stan' AND t.id = $1""",
        tid,
    )
    assert level == "write"
    assert (await acct.put(f"/teams/{tid}/repos/pub/open", as_="owner")).status == 404
    assert (await acct.put(f"/teams/{tid}/members/nobody", as_="owner")).status == 404
    assert (await acct.put(f"/teams/{tid}/members/stan", as_="member")).status == 403
    # a team of an organization the caller may not see is a team that does not exist
    hidden = await acct.put(f"/teams/{tid}/members/colin", as_="collaborator")
    missing = await acct.put("/teams/999999/members/colin", as_="collaborator")
    junk = await acct.put("/teams/abc/members/colin", as_="collaborator")
    assert hidden.status == missing.status == junk.status == 404
    assert hidden.raw == missing.raw == junk.raw
    assert (await acct.delete(f"/teams/{tid}/members/stan", as_="owner")).status == 204
    assert (await acct.delete(f"/teams/{tid}/repos/priv/vault", as_="owner")).status == 204
    # leaving the team keeps the membership (Gitea's rule); removing the member ends it
    assert (await acct.get("/orgs/priv/teams", as_="stranger")).status == 200
    assert (await acct.delete("/orgs/priv/members/stan", as_="owner")).status == 204
    assert (await acct.get("/orgs/priv/teams", as_="stranger")).status == 404
    last = await acct.delete("/orgs/priv/members/olive", as_="owner")
    assert last.status == 422  # the last owner stays
    types = [
        r["type"]
        for r in await db.fetch(
            "SELECT type FROM core.outbox WHERE type <> 'audit.recorded' ORDER BY occurred_at"
        )
    ]
    for expected in (
        "team.created",
        "org.member.added",
        "team.member.added",
        "team.member.removed",
        "org.member.removed",
    ):
        assert expected in types


async def test_a_team_of_all_repositories_holds_those_made_later_too(acct: Api, db: Any) -> None:
    """Gitea's `includes_all_repositories` (its Owners team; what Gitea's Terraform provider
    sends): every repository of the organization, now and later; removing one is ignored."""

    async def held(team_id: int) -> set[str]:
        rows = await db.fetch(
            """SELECT r.name FROM core.team_repos tr JOIN core.repositories r ON r.id = tr.repo_id
                WHERE tr.team_id = $1""",
            team_id,
        )
        return {row["name"] for row in rows}

    made = await acct.post(
        "/orgs/priv/teams",
        as_="owner",
        json={
            "name": "Owners",
            "permission": "admin",
            "includes_all_repositories": True,
            "can_create_org_repo": True,
            "units": ["repo.code", "repo.releases"],
        },
    )
    assert made.status == 201, made.json
    assert made.json["includes_all_repositories"] is True
    tid = made.json["id"]
    existing = {
        r["name"]
        for r in await db.fetch(
            """SELECT r.name FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
            WHERE o.name = 'priv'"""
        )
    }
    assert existing and await held(tid) == existing
    later = await acct.post("/orgs/priv/repos", as_="owner", json={"name": "later"})
    assert later.status == 201
    assert await held(tid) == existing | {"later"}
    assert (await acct.get(f"/teams/{tid}", as_="owner")).json["includes_all_repositories"]
    assert (await acct.delete(f"/teams/{tid}/repos/priv/later", as_="owner")).status == 204
    assert "later" in await held(tid)  # ignored, as Gitea ignores it
    # a member of the team reaches the new repository with the team's permission
    assert (await acct.put(f"/teams/{tid}/members/stan", as_="owner")).status == 204
    level = await db.fetchval(
        """SELECT t.permission FROM core.team_repos tr JOIN core.teams t ON t.id = tr.team_id
            JOIN core.team_members m ON m.team_id = t.id JOIN core.accounts a ON a.id = m.user_id
            JOIN core.repositories r ON r.id = tr.repo_id
           WHERE a.name = 'stan' AND r.name = 'later'"""
    )
    assert level == "admin"
    # other teams are unchanged
    plain = await acct.post("/orgs/priv/teams", as_="owner", json={"name": "few"})
    assert plain.json["includes_all_repositories"] is False
    assert await held(plain.json["id"]) == set()


# --- tokens --------------------------------------------------------------------------------


async def test_tokens_want_the_password_and_work_within_their_scopes(acct: Api) -> None:
    olive = {"Authorization": basic("olive", PASSWORD)}
    # a token, even as the basic password, cannot list or make tokens (Gitea: auth required)
    for headers in (
        {"Authorization": "token olive-token"},
        {"Authorization": basic("olive", "olive-token")},
        {},
    ):
        reply = await acct.get("/users/olive/tokens", headers=headers)
        assert reply.status == 401 and reply.json == {"message": "auth required"}
    assert (await acct.get("/users/olive/tokens", headers=olive)).json[0]["name"] == "world"
    other = await acct.get("/users/mia/tokens", headers=olive)
    assert other.status == 403
    assert (await acct.get("/users/nobody/tokens", headers=olive)).status == 404
    made = await acct.post(
        "/users/olive/tokens",
        headers=olive,
        json={"name": "ci", "scopes": ["read:repository", "write:repository"]},
    )
    assert made.status == 201
    token = made.json
    assert len(token["sha1"]) == 40 and token["token_last_eight"] == token["sha1"][-8:]
    assert token["scopes"] == ["write:repository"]  # Gitea's normalisation
    listed = (await acct.get("/users/olive/tokens", headers=olive)).json
    assert [t["sha1"] for t in listed] == ["", ""]  # shown once only
    dup = await acct.post(
        "/users/olive/tokens", headers=olive, json={"name": "ci", "scopes": ["all"]}
    )
    assert dup.status == 400 and dup.json == {"message": "access token name has been used already"}
    unscoped = await acct.post(
        "/users/olive/tokens", headers=olive, json={"name": "x", "scopes": []}
    )
    assert unscoped.json == {"message": "access token must have a scope"}
    unknown = await acct.post(
        "/users/olive/tokens", headers=olive, json={"name": "x", "scopes": ["write:everything"]}
    )
    assert unknown.status == 400
    # the new token: a repository scope does not reach users or organizations
    ci = {"Authorization": f"token {token['sha1']}"}
    refused = await acct.get("/user", headers=ci)
    assert refused.status == 403
    assert refused.json == {
        "message": "token does not have at least one of required scope(s): [read:user]"
    }
    refused = await acct.post("/orgs", headers=ci, json={"username": "x"})
    assert refused.json == {
        "message": "token does not have at least one of required scope(s): [write:organization]"
    }
    # the token also works as the basic password (Gitea's way), within the same scopes
    as_basic = await acct.get("/user", headers={"Authorization": basic("olive", token["sha1"])})
    assert as_basic.status == 403
    used = {
        t["name"]: t["last_used_at"]
        for t in (await acct.get("/users/olive/tokens", headers=olive)).json
    }
    assert used["ci"] != "0001-01-01T00:00:00Z"  # Gitea's "last used", kept once a minute
    # a site admin manages anyone's tokens with their password
    ada = {"Authorization": basic("ada", PASSWORD)}
    assert (await acct.get("/users/olive/tokens", headers=ada)).status == 200
    assert (await acct.delete(f"/users/olive/tokens/{token['id']}", headers=ada)).status == 204
    assert (await acct.get("/user", headers=ci)).status == 401  # revoked at once
    assert (await acct.delete("/users/olive/tokens/ci", headers=olive)).status == 404


async def test_read_scopes_read_and_write_scopes_write(acct: Api) -> None:
    olive = {"Authorization": basic("olive", PASSWORD)}
    made = await acct.post(
        "/users/olive/tokens",
        headers=olive,
        json={"name": "org-reader", "scopes": ["read:organization"]},
    )
    reader = {"Authorization": f"token {made.json['sha1']}"}
    assert (await acct.get("/orgs/pub/teams", headers=reader)).status == 200
    assert (await acct.post("/orgs/pub/teams", headers=reader, json={"name": "x"})).status == 403
    made = await acct.post(
        "/users/olive/tokens",
        headers=olive,
        json={"name": "org-writer", "scopes": ["write:organization"]},
    )
    writer = {"Authorization": f"token {made.json['sha1']}"}
    assert (await acct.post("/orgs/pub/teams", headers=writer, json={"name": "x"})).status == 201
    assert (await acct.get("/openapi.json", headers=reader)).status == 200  # needs no scope
    # Gitea files POST /user/repos under `user`
    assert (await acct.post("/user/repos", headers=writer, json={"name": "r"})).status == 403
