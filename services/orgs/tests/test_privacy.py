"""Privacy (docs/access.md, docs/orgs.md "Decisions"): the matrix of viewers (anonymous, signed-in
stranger, member, owner, site admin) × organizations (public, limited, private) × pinned
repositories (public `open`, private `secret`) × members (public olive and mia, concealed cora).
Nobody learns through this API about a repository they cannot read, a concealed member, or an
organization they may not see."""

from __future__ import annotations

import pytest
from forge_common.access import Access, access_to
from forge_common.auth import Viewer

from .conftest import LOGINS, VIEWERS

ORGS = {"pub": "public", "lim": "limited", "priv": "private"}
SEES_ORG = {
    "public": set(VIEWERS),
    "limited": {"stranger", "member", "owner", "admin"},
    "private": {"member", "owner", "admin"},
}
READS_PRIVATE_REPOS = {"owner", "admin"}  # the member's team has no repositories
INSIDERS = {"member", "owner"}  # see member and team counts (site admins are not members)
READ_PATHS = ("overview", "pinned", "pinned/groups", "public_members/roles")


@pytest.mark.parametrize("org", list(ORGS))
@pytest.mark.parametrize("viewer", VIEWERS)
async def test_privacy_matrix(ro_api, viewer, org):
    visibility = ORGS[org]
    if viewer not in SEES_ORG[visibility]:
        for path in READ_PATHS:
            reply = await ro_api.get(f"/orgs/{org}/{path}", as_=viewer)
            assert reply.status == 404, path
            assert org not in reply.raw.decode() and "secret" not in reply.raw.decode()
        return

    private_ok = viewer in READS_PRIVATE_REPOS
    expected_pins = ["open", "secret", "loose"] if private_ok else ["open", "loose"]
    expected_groups = ["Featured", "Hidden"] if private_ok else ["Featured"]

    pinned = await ro_api.get(f"/orgs/{org}/pinned", as_=viewer)
    assert [p["repo"]["name"] for p in pinned.json] == expected_pins
    groups = await ro_api.get(f"/orgs/{org}/pinned/groups", as_=viewer)
    assert [g["name"] for g in groups.json] == expected_groups
    roles = await ro_api.get(f"/orgs/{org}/public_members/roles", as_=viewer)
    assert [m["user"]["login"] for m in roles.json] == ["mia", "olive"]
    assert roles.headers["X-Total-Count"] == "2"

    overview = (await ro_api.get(f"/orgs/{org}/overview", as_=viewer)).json
    assert overview["organization"]["visibility"] == visibility
    assert [p["repo"]["name"] for p in overview["pinned_repos"]] == expected_pins
    assert [g["name"] for g in overview["pinned_groups"]] == expected_groups
    assert [m["user"]["login"] for m in overview["public_members"]] == ["mia", "olive"]
    assert overview["total_members"] == 2
    insider = viewer in INSIDERS
    assert overview["stats"] == {
        "member_count": 3 if insider else 2,
        "repo_count": 5 if private_ok else 3,
        "public_repo_count": 3,
        "team_count": 1 if insider else 0,
    }
    everything = b"".join(r.raw for r in (pinned, groups, roles))
    assert b"cora" not in everything and b"Cora" not in everything
    if not private_ok:
        assert b"secret" not in everything and b"Hidden" not in everything
        assert b"vault" not in everything


@pytest.mark.parametrize("org", list(ORGS))
async def test_privacy_concealed_member_viewing_sees_herself_nowhere_in_public_lists(ro_api, org):
    overview = (await ro_api.get(f"/orgs/{org}/overview", as_="concealed")).json
    assert [m["user"]["login"] for m in overview["public_members"]] == ["mia", "olive"]
    assert overview["stats"]["member_count"] == 3


async def test_privacy_outside_collaborator_sees_the_private_pin_they_can_read(api, ids, db):
    await db.execute(
        "INSERT INTO core.collaborators (repo_id, user_id, permission) VALUES ($1, $2, 'read')",
        ids.repos[("pub", "secret")],
        ids.accounts["stan"],
    )
    overview = (await api.get("/orgs/pub/overview", as_="stranger")).json
    assert [p["repo"]["name"] for p in overview["pinned_repos"]] == ["open", "secret", "loose"]
    assert [g["name"] for g in overview["pinned_groups"]] == ["Featured", "Hidden"]
    # readable, but still rendered with read permission only
    assert overview["pinned_repos"][1]["repo"]["permissions"] == {
        "admin": False,
        "push": False,
        "pull": True,
    }
    assert overview["stats"]["repo_count"] == 4  # 3 public + the one it can read
    assert overview["stats"]["member_count"] == 2 and overview["stats"]["team_count"] == 0


async def test_privacy_member_reading_private_repo_through_team(api, ids, db):
    team = await db.fetchval("SELECT id FROM core.teams WHERE org_id = $1", ids.accounts["priv"])
    await db.execute(
        "INSERT INTO core.team_repos (team_id, repo_id) VALUES ($1, $2)",
        team,
        ids.repos[("priv", "secret")],
    )
    pins = (await api.get("/orgs/priv/pinned", as_="member")).json
    assert [p["repo"]["name"] for p in pins] == ["open", "secret", "loose"]
    stats = (await api.get("/orgs/priv/overview", as_="member")).json["stats"]
    assert stats["repo_count"] == 4  # 3 public + secret through the team; not vault


async def test_privacy_repo_count_counts_unpinned_private_repos_the_viewer_can_read(api, ids, db):
    await db.execute(
        "INSERT INTO core.collaborators (repo_id, user_id, permission) VALUES ($1, $2, 'write')",
        ids.repos[("lim", "vault")],
        ids.accounts["stan"],
    )
    stats = (await api.get("/orgs/lim/overview", as_="stranger")).json["stats"]
    assert stats["repo_count"] == 4 and stats["public_repo_count"] == 3
    # a grant on another organization's repository counts nowhere else
    other = (await api.get("/orgs/pub/overview", as_="stranger")).json["stats"]
    assert other["repo_count"] == 3


async def test_privacy_group_with_no_visible_pin_is_left_out_for_non_owners_only(api, ids):
    reply = await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": "Empty"})
    assert reply.status == 201
    # docs/orgs.md "Decisions" names owners: a site admin, who is not one, sees only groups with
    # a visible pin
    for viewer, sees in (
        ("anonymous", False),
        ("member", False),
        ("owner", True),
        ("admin", False),
    ):
        names = [g["name"] for g in (await api.get("/orgs/pub/pinned/groups", as_=viewer)).json]
        assert ("Empty" in names) is sees, viewer


@pytest.mark.parametrize(
    ("viewer", "org", "status"),
    [
        ("anonymous", "priv", 401),
        ("stranger", "priv", 404),
        ("stranger", "lim", 403),
        ("stranger", "pub", 403),
        ("member", "priv", 403),
    ],
)
async def test_privacy_writes_never_reveal_a_hidden_organization(ro_api, viewer, org, status):
    reply = await ro_api.post(f"/orgs/{org}/pinned", as_=viewer, json={"repo_name": "spare"})
    assert reply.status == status
    reply = await ro_api.post(f"/orgs/{org}/pinned/groups", as_=viewer, json={"name": "x"})
    assert reply.status == status


async def test_privacy_invalid_token_is_401_never_anonymous(ro_api):
    reply = await ro_api.get("/orgs/pub/overview", headers={"Authorization": "token wrong"})
    assert reply.status == 401


async def test_privacy_filter_agrees_with_the_shared_resolver_repository_by_repository(
    api, ids, db
):
    """The overview settles whole kinds of repositories at once; asking the shared resolver
    about every repository one by one must give the same pins and the same repo_count."""
    await db.execute(
        """INSERT INTO core.collaborators (repo_id, user_id, permission)
           VALUES ($1, $3, 'read'), ($2, $3, 'admin')""",
        ids.repos[("lim", "secret")],
        ids.repos[("priv", "vault")],
        ids.accounts["stan"],
    )
    team = await db.fetchval("SELECT id FROM core.teams WHERE org_id = $1", ids.accounts["pub"])
    await db.execute(
        "INSERT INTO core.team_repos (team_id, repo_id) VALUES ($1, $2)",
        team,
        ids.repos[("pub", "vault")],
    )
    for viewer in VIEWERS:
        who = None
        if viewer != "anonymous":
            login = LOGINS[viewer]
            who = Viewer(ids.accounts[login], login, is_admin=viewer == "admin")
        for org in ORGS:
            reply = await api.get(f"/orgs/{org}/overview", as_=viewer)
            if reply.status == 404:
                continue
            readable = {
                repo_id
                for (owner, _), repo_id in ids.repos.items()
                if owner == org and await access_to(db, who, repo_id) >= Access.READ
            }
            pinned = {ids.repos[(org, name)] for name in ("open", "secret", "loose")}
            body = reply.json
            assert {p["repo_id"] for p in body["pinned_repos"]} == pinned & readable, (viewer, org)
            assert body["stats"]["repo_count"] == len(readable), (viewer, org)
