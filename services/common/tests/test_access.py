"""The access resolver against the full matrix: every kind of viewer × public and
private repositories × public landing / public releases, through the real database."""

from __future__ import annotations

import pytest
from forge_common.access import Access, access_to, repository_access
from forge_common.auth import Viewer

N, R, W, A = Access.NONE, Access.READ, Access.WRITE, Access.ADMIN
REPOS = ["pub", "priv", "landing", "rel"]
USERS = [
    "site_admin", "owner", "org_owner", "member", "stranger",
    "team_read", "team_write", "team_admin", "collab_read", "collab_write", "collab_admin",
]  # fmt: skip

WORLD = {
    "users": [{"name": n, "admin": n == "site_admin"} for n in USERS],
    "orgs": [
        {
            "name": "acme",
            "members": [
                {"user": "org_owner", "owner": True},
                {"user": "member"},
                {"user": "team_read"},
                {"user": "team_write"},
                {"user": "team_admin"},
            ],
            "teams": [
                {"name": f"t-{p}", "permission": p, "members": [f"team_{p}"], "repos": REPOS}
                for p in ("read", "write", "admin")
            ],
        },
        {"name": "hidden", "visibility": "private", "members": [{"user": "member"}]},
        {"name": "limited", "visibility": "limited"},
    ],
    "repos": [
        *[
            {
                "owner": owner,
                "name": name,
                "private": name != "pub",
                "public_landing": name == "landing",
                "public_releases": name == "rel",
                "collaborators": [
                    {"user": f"collab_{p}", "permission": p} for p in ("read", "write", "admin")
                ],
            }
            for owner in ("acme", "owner")
            for name in REPOS
        ],
        {"owner": "hidden", "name": "pub"},
        {"owner": "limited", "name": "pub"},
    ],
}

# viewer → level on acme's pub, priv, landing, rel (plain API); release API differs only below.
ORG_MATRIX = {
    None: [R, N, N, N],
    "stranger": [R, N, N, N],
    "member": [R, N, N, N],
    "team_read": [R, R, R, R],
    "team_write": [W, W, W, W],
    "team_admin": [A, A, A, A],
    "collab_read": [R, R, R, R],
    "collab_write": [W, W, W, W],
    "collab_admin": [A, A, A, A],
    "org_owner": [A, A, A, A],
    "site_admin": [A, A, A, A],
    "owner": [R, N, N, N],  # owns a user account of the same repos, not acme's
}


@pytest.fixture
async def world(load):
    ids = await load(WORLD)

    def viewer(name: str | None) -> Viewer | None:
        if name is None:
            return None
        return Viewer(ids.accounts[name], name, is_admin=name == "site_admin")

    return ids, viewer


@pytest.mark.parametrize("who", list(ORG_MATRIX))
async def test_organization_repositories_matrix(db, world, who):
    ids, viewer = world
    repo_ids = [ids.repos[("acme", r)] for r in REPOS]
    plain = await repository_access(db, viewer(who), repo_ids)
    assert [plain[i] for i in repo_ids] == ORG_MATRIX[who]


@pytest.mark.parametrize("who", list(ORG_MATRIX))
async def test_release_api_reads_private_repositories_with_public_landing_or_releases(
    db, world, who
):
    """Authentication rule 4 (docs/access.md): public landing or public releases → readable by
    anyone."""
    ids, viewer = world
    repo_ids = [ids.repos[("acme", r)] for r in REPOS]
    levels = await repository_access(db, viewer(who), repo_ids, release_api=True)
    expected = list(ORG_MATRIX[who])
    expected[2], expected[3] = max(expected[2], R), max(expected[3], R)
    assert [levels[i] for i in repo_ids] == expected


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("owner", [A, A, A, A]),  # the owning user
        (None, [R, N, N, N]),
        ("stranger", [R, N, N, N]),
        ("collab_write", [W, W, W, W]),
        ("team_admin", [R, N, N, N]),  # acme's teams do not reach a user's repositories
        ("site_admin", [A, A, A, A]),
    ],
)
async def test_user_owned_repositories(db, world, who, expected):
    ids, viewer = world
    repo_ids = [ids.repos[("owner", r)] for r in REPOS]
    levels = await repository_access(db, viewer(who), repo_ids)
    assert [levels[i] for i in repo_ids] == expected


@pytest.mark.parametrize(
    ("who", "hidden", "limited"),
    [
        (None, N, N),
        ("stranger", N, R),
        ("member", R, R),  # member of the private organization
        ("site_admin", A, A),
    ],
)
async def test_public_repository_of_an_organization_you_cannot_see_stays_hidden(
    db, world, who, hidden, limited
):
    ids, viewer = world
    assert await access_to(db, viewer(who), ids.repos[("hidden", "pub")]) == hidden
    assert await access_to(db, viewer(who), ids.repos[("limited", "pub")]) == limited


async def test_unknown_repository_has_no_access(db, world):
    _, viewer = world
    assert await access_to(db, viewer("site_admin"), 999_999) == N
