"""Gitea's repository administration on the releases service (docs/accounts.md): PATCH and
DELETE /api/v1/repos/{owner}/{repo}, collaborators; every privacy class against every kind of
repository; a hidden repository answers exactly as a missing one; scopes on the release API (a
publish with a read:repository token is 403 with Gitea's message); events in the outbox."""

from __future__ import annotations

from typing import Any

import pytest
from forge_common.accounts import tokens
from forge_common.accounts.users import user_by_name

from .support import rel

CLASSES = ("anonymous", "stranger", "member", "collaborator", "team", "owner", "admin")
LOGINS = {
    "stranger": "stan",
    "member": "mia",
    "collaborator": "colin",
    "team": "tess",
    "owner": "olive",
    "admin": "ada",
}


def _world() -> dict[str, Any]:
    users = [{"name": login, "tokens": [f"{login}-token"]} for login in LOGINS.values()]
    users[-1]["admin"] = True
    members = [{"user": "olive", "owner": True}, {"user": "mia"}, {"user": "tess"}]
    colin = [{"user": "colin", "permission": "admin"}]
    repos = [
        {"owner": "pub", "name": "app", "releases": [rel("v1.0.0", 1, "app.zip")]},
        {"owner": "pub", "name": "vault", "private": True, "collaborators": colin},
        {"owner": "priv", "name": "app", "private": True, "collaborators": colin},
    ]
    team = {"name": "admins", "permission": "admin", "members": ["tess"]}
    return {
        "users": users,
        "orgs": [
            {"name": "pub", "members": members, "teams": [{**team, "repos": ["vault"]}]},
            {
                "name": "priv",
                "visibility": "private",
                "members": members,
                "teams": [{**team, "repos": ["app"]}],
            },
        ],
        "repos": repos,
    }


def auth(role: str) -> dict[str, str]:
    return {} if role == "anonymous" else {"Authorization": f"token {LOGINS[role]}-token"}


@pytest.fixture
async def client(make_client: Any, load: Any) -> Any:
    await load(_world())
    return await make_client()


# status of PATCH (admin access) per repository and class; DELETE wants an owner
_EDIT = {
    "pub/app": {
        "anonymous": 401,
        "stranger": 403,
        "member": 403,
        "collaborator": 403,
        "team": 403,
        "owner": 200,
        "admin": 200,
    },
    "pub/vault": {
        "anonymous": 401,
        "stranger": 404,
        "member": 404,
        "collaborator": 200,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    # colin collaborates on priv/app but is no member of the private organization: 404
    "priv/app": {
        "anonymous": 404,
        "stranger": 404,
        "member": 404,
        "collaborator": 404,
        "team": 200,
        "owner": 200,
        "admin": 200,
    },
    "nosuch/app": dict.fromkeys(CLASSES, 404),
    "pub/nosuch": {**dict.fromkeys(CLASSES, 404)},
}


async def test_edit_answers_every_privacy_class_and_hides_what_it_must(client: Any) -> None:
    not_found = set()
    for repo, expected in _EDIT.items():
        for role in CLASSES:
            resp = await client.patch(
                f"/api/v1/repos/{repo}", json={"description": role}, headers=auth(role)
            )
            assert resp.status == expected[role], (repo, role, await resp.text())
            if resp.status == 404:
                not_found.add(await resp.read())
            if resp.status == 200:
                body = await resp.json()
                assert body["full_name"] == repo and body["description"] == role
    assert len(not_found) == 1  # hidden and missing repositories answer byte for byte alike


async def test_edit_changes_visibility_and_public_access_at_once(client: Any, db: Any) -> None:
    reads = "/api/v1/repos/pub/vault/releases"
    assert (await client.get(reads)).status == 401
    resp = await client.patch(
        "/api/v1/repos/pub/vault", json={"public_releases": True}, headers=auth("owner")
    )
    assert (await resp.json())["public_releases"] is True
    assert (await client.get(reads)).status == 200  # no stale cached answer
    resp = await client.patch(
        "/api/v1/repos/pub/app", json={"private": True}, headers=auth("owner")
    )
    assert (await resp.json())["private"] is True
    assert (await client.get("/api/v2/repos/pub/app/releases")).status == 401
    renamed = await client.patch(
        "/api/v1/repos/pub/app", json={"name": "desktop"}, headers=auth("owner")
    )
    assert (await renamed.json())["full_name"] == "pub/desktop"
    assert (await client.get("/api/v1/repos/pub/desktop", headers=auth("owner"))).status == 200
    taken = await client.patch(
        "/api/v1/repos/pub/desktop", json={"name": "VAULT"}, headers=auth("owner")
    )
    assert taken.status == 422
    bad = await client.patch(
        "/api/v1/repos/pub/desktop", json={"private": "yes"}, headers=auth("owner")
    )
    assert bad.status == 422
    types = [r["type"] for r in await db.fetch("SELECT type FROM core.outbox")]
    assert types.count("repository.updated") == 3


async def test_delete_wants_an_owner_and_takes_the_files(
    client: Any, db: Any, settings: Any
) -> None:
    vault = "/api/v1/repos/pub/vault"
    for role, status in (
        ("anonymous", 401),
        ("stranger", 404),
        ("member", 404),
        ("collaborator", 403),
        ("team", 403),
    ):
        resp = await client.delete(vault, headers=auth(role))
        assert resp.status == status, role
    refused = await client.delete(vault, headers=auth("collaborator"))
    assert (await refused.json()) == {"message": "user should be the owner of the repo"}
    assert (await client.delete(vault, headers=auth("owner"))).status == 204
    assert (await client.get(vault, headers=auth("owner"))).status == 404
    files = [p for p in settings.storage_path.rglob("*") if p.is_file()]
    assert files  # pub/app's asset
    assert (await client.delete("/api/v1/repos/pub/app", headers=auth("admin"))).status == 204
    assert not [p for p in settings.storage_path.rglob("*") if p.is_file()]
    assert await db.fetchval("SELECT count(*) FROM releases.releases") == 0
    payload = await db.fetchval(
        "SELECT payload FROM core.outbox WHERE type = 'repository.deleted' LIMIT 1"
    )
    assert payload["owner"] == "pub"


async def test_collaborators_are_added_changed_and_removed(client: Any, db: Any) -> None:
    url = "/api/v1/repos/pub/app/collaborators/stan"
    assert (await client.put(url, json={"permission": "write"})).status == 401
    assert (
        await client.put(url, json={"permission": "write"}, headers=auth("member"))
    ).status == 403
    assert (
        await client.put(url, json={"permission": "write"}, headers=auth("owner"))
    ).status == 204
    # the collaborator may now publish
    made = await client.post(
        "/api/v1/repos/pub/app/releases", json={"tag_name": "v2.0.0"}, headers=auth("stranger")
    )
    assert made.status == 201
    assert (await client.put(url, json={"permission": "read"}, headers=auth("owner"))).status == 204
    again = await client.post(
        "/api/v1/repos/pub/app/releases", json={"tag_name": "v3.0.0"}, headers=auth("stranger")
    )
    assert again.status == 403
    bad = await client.put(url, json={"permission": "owner"}, headers=auth("owner"))
    assert bad.status == 422
    nobody = await client.put(
        "/api/v1/repos/pub/app/collaborators/nobody",
        json={"permission": "read"},
        headers=auth("owner"),
    )
    assert nobody.status == 422
    assert (await nobody.json()) == {"message": "user does not exist [uid: 0, name: nobody]"}
    # a collaborator on a repository of a hidden organization: as missing as the repository
    hidden = await client.put(
        "/api/v1/repos/priv/app/collaborators/stan",
        json={"permission": "read"},
        headers=auth("stranger"),
    )
    assert hidden.status == 404
    assert (await client.delete(url, headers=auth("owner"))).status == 204
    private = await client.get("/api/v1/repos/pub/vault", headers=auth("stranger"))
    assert private.status == 404
    types = [r["type"] for r in await db.fetch("SELECT type FROM core.outbox")]
    assert types.count("repository.collaborator.added") == 2
    assert types.count("repository.collaborator.removed") == 1


async def _token(db: Any, login: str, name: str, *scopes: str) -> dict[str, str]:
    user = await user_by_name(db, login)
    assert user is not None
    made = await tokens.create_token(db, user.id, name, scopes)
    assert made is not None
    return {"Authorization": f"token {made[1]}"}


async def test_a_read_repository_token_is_refused_a_publish_in_gitea_words(
    client: Any, db: Any
) -> None:
    reader = await _token(db, "olive", "reader", "read:repository")
    writer = await _token(db, "olive", "writer", "write:repository")
    other = await _token(db, "olive", "orgs", "write:organization")
    refused = await client.post(
        "/api/v2/repos/pub/app/releases", json={"tag_name": "v9.0.0"}, headers=reader
    )
    assert refused.status == 403
    message = "token does not have at least one of required scope(s): [write:repository]"
    assert (await refused.json())["error"]["message"] == message
    gitea = await client.post(
        "/api/v1/repos/pub/app/releases", json={"tag_name": "v9.0.0"}, headers=reader
    )
    assert gitea.status == 403 and (await gitea.json()) == {"message": message}
    # the answer is the same for a private repository, a hidden one and none at all
    for path in ("pub/vault", "priv/app", "nosuch/app"):
        resp = await client.post(
            f"/api/v2/repos/{path}/releases", json={"tag_name": "v9"}, headers=reader
        )
        assert (await resp.json())["error"]["message"] == message
    assert (await client.get("/api/v2/repos/pub/app/releases", headers=reader)).status == 200
    download = await client.get("/pub/app/releases/download/v1.0.0/app.zip", headers=reader)
    assert download.status == 200
    refused = await client.get("/api/v2/repos/pub/app/releases", headers=other)
    assert (await refused.json())["error"]["message"] == (
        "token does not have at least one of required scope(s): [read:repository]"
    )
    made = await client.post(
        "/api/v2/repos/pub/app/releases", json={"tag_name": "v9.0.0"}, headers=writer
    )
    assert made.status == 201
    # the world file's tokens keep `all`
    assert await db.fetchval(
        "SELECT scopes FROM core.access_tokens WHERE name = 'world' LIMIT 1"
    ) == ["all"]
