"""The world loader (docs/cli-and-world.md): a good file loads; each kind of bad entry is rejected
with its path and nothing is written; tokens are stored only hashed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from forge_common.accounts.passwords import verify_password
from forge_common.cli import demo_sign_ins, main
from forge_common.world import WorldError

DEMO = Path(__file__).resolve().parents[3] / "demo" / "world.json"

GOOD = {
    "users": [{"name": "alice", "tokens": ["alice-secret-token"]}, {"name": "bob"}],
    "orgs": [
        {
            "name": "acme",
            "members": [{"user": "alice", "owner": True, "public": True}, {"user": "bob"}],
            "teams": [
                {"name": "devs", "permission": "write", "members": ["bob"], "repos": ["app"]}
            ],
            "pin_groups": [{"name": "Featured"}],
            "pins": [{"repo": "app", "group": "Featured", "display_order": 1}],
        }
    ],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [
                {"tag": "v1.0.0", "assets": [{"name": "a.zip", "size": 10}]},
                {"tag": "v1.1.0", "assets": [{"name": "RELEASES", "content": "x"}]},
            ],
        }
    ],
}


async def counts(db) -> dict[str, int]:
    tables = ["core.accounts", "core.repositories", "core.access_tokens", "releases.releases",
              "releases.assets", "orgs.pins", "orgs.pin_groups", "core.teams"]  # fmt: skip
    return {t: await db.fetchval(f"SELECT count(*) FROM {t}") for t in tables}


async def test_good_world_loads_everything(db, load, settings):
    await load(GOOD)
    assert await counts(db) == {
        "core.accounts": 3, "core.repositories": 1, "core.access_tokens": 1,
        "releases.releases": 2, "releases.assets": 2, "orgs.pins": 1, "orgs.pin_groups": 1,
        "core.teams": 1,
    }  # fmt: skip
    size, sha = await db.fetchrow("SELECT size, sha256 FROM releases.assets WHERE name = 'a.zip'")
    assert size == 10
    stored = settings.storage_path / "sha256" / sha[:2] / sha[2:4] / sha
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == sha


async def test_releases_without_created_at_get_consecutive_times_in_file_order(db, load):
    await load(GOOD)
    rows = await db.fetch("SELECT tag FROM releases.releases ORDER BY created_at")
    assert [r["tag"] for r in rows] == ["v1.0.0", "v1.1.0"]


async def test_tokens_are_stored_only_as_sha256(db, load):
    await load(GOOD)
    stored = await db.fetchval("SELECT token_sha256 FROM core.access_tokens")
    assert stored == hashlib.sha256(b"alice-secret-token").digest()
    dump = json.dumps([dict(r) for r in await db.fetch("SELECT * FROM core.access_tokens")],
                      default=str)  # fmt: skip
    assert "alice-secret-token" not in dump


async def test_a_password_is_stored_only_as_an_argon2id_hash(db, load):
    world = json.loads(json.dumps(GOOD))
    world["users"][0]["password"] = "alice-password"
    await load(world)
    stored = await db.fetchval("SELECT password_hash FROM core.accounts WHERE name = 'alice'")
    assert stored.startswith("$argon2id$") and "alice-password" not in stored
    assert await verify_password(stored, "alice-password")
    # users without one sign in with tokens only
    assert await db.fetchval("SELECT count(*) FROM core.accounts WHERE password_hash IS NULL") >= 1


async def test_a_short_password_is_named_and_nothing_is_loaded(db, load):
    world = json.loads(json.dumps(GOOD))
    world["users"][0]["password"] = "short"
    with pytest.raises(WorldError) as caught:
        await load(world)
    assert caught.value.problems == ["users[0].password: must be at least 8 characters"]


def test_forge_dev_prints_only_demo_passwords(tmp_path):
    path = tmp_path / "w.json"
    users = [
        {"name": "alice", "password": "alice-demo-password"},
        {"name": "bob", "password": "a-real-secret"},
        {"name": "carol"},
    ]
    path.write_text(json.dumps({"users": users}))
    assert demo_sign_ins(path) == "alice / alice-demo-password"
    demo = demo_sign_ins(DEMO)
    assert "alice / alice-demo-password" in demo and "dave / dave-demo-password" in demo


def bad(path: list[object], value: object) -> dict[str, object]:
    """GOOD with the value at `path` replaced (or removed when value is ...)."""
    world = json.loads(json.dumps(GOOD))
    target = world
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return world


@pytest.mark.parametrize(
    ("world", "problem"),
    [
        (bad(["repos", 0, "releases", 0, "tag"], ...), "repos[0].releases[0].tag: missing"),
        (bad(["repos", 0, "releases", 1, "tag"], "v1.0.0"), "repos[0].releases[1].tag: duplicate"),
        (bad(["repos", 0, "releases", 0, "tag"], "v 1"), "repos[0].releases[0].tag: must not"),
        (
            bad(["repos", 0, "releases", 0, "assets", 0, "name"], "../x"),
            "repos[0].releases[0].assets[0].name: must not contain",
        ),
        (
            bad(["repos", 0, "releases", 0, "assets", 0], {"name": "b"}),
            "repos[0].releases[0].assets[0]: give exactly one of content or size",
        ),
        (
            bad(["repos", 0, "releases", 0, "created_at"], "yesterday"),
            "repos[0].releases[0].created_at: not an RFC 3339",
        ),
        (bad(["repos", 0, "owner"], "nobody"), "repos[0].owner: unknown account 'nobody'"),
        (bad(["repos", 0, "private"], "yes"), "repos[0].private: must be true or false"),
        (bad(["users", 1, "name"], "alice"), "users[1].name: duplicate account name"),
        (bad(["users", 0, "name"], "bad name!"), "users[0].name: 'bad name!' is not a valid"),
        (bad(["orgs", 0, "visibility"], "secret"), "orgs[0].visibility: must be one of"),
        (bad(["orgs", 0, "members", 1, "user"], "zed"), "orgs[0].members[1].user: unknown user"),
        (bad(["orgs", 0, "teams", 0, "permission"], "owner"), "orgs[0].teams[0].permission"),
        (bad(["orgs", 0, "teams", 0, "repos"], ["nope"]), "orgs[0].teams[0].repos[0]: unknown"),
        (bad(["orgs", 0, "pins", 0, "repo"], "nope"), "orgs[0].pins[0].repo: no repository"),
        (bad(["orgs", 0, "pins", 0, "group"], "Other"), "orgs[0].pins[0].group: no pin group"),
        (bad(["orgs", 0, "pin_groups", 0, "name"], "x" * 101), "orgs[0].pin_groups[0].name"),
        # every display name follows one rule (forge_common.names): nothing hidden in it
        (bad(["orgs", 0, "pin_groups", 0, "name"], "a\u202eb"), "orgs[0].pin_groups[0].name: must"),
        (bad(["orgs", 0, "full_name"], "bell\x07"), "orgs[0].full_name: must not contain"),
        (bad(["users", 0, "full_name"], "\u202eAlice"), "users[0].full_name: must not contain"),
        (bad(["orgs", 0, "teams", 0, "name"], "t\u2066"), "orgs[0].teams[0].name: must not"),
        (
            bad(["repos", 0, "releases", 0, "title"], "t\x1b[31m"),
            "repos[0].releases[0].title: must not contain",
        ),
        (bad(["orgs", 0, "pins", 0, "display_order"], 2**31), "orgs[0].pins[0].display_order"),
        (bad(["repos"], {"a": 1}), "repos: must be a list"),
        (bad(["users", 0], "alice"), "users[0]: must be an object"),
        ({**GOOD, "teams": []}, "teams: unknown section"),
    ],
)
async def test_bad_entry_is_named_and_nothing_is_loaded(db, load, world, problem):
    with pytest.raises(WorldError) as caught:
        await load(world)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems
    assert set((await counts(db)).values()) == {0}


async def test_team_member_outside_the_organization_is_named(db, load):
    world = bad(["orgs", 0, "teams", 0, "members"], ["bob", "zed"])
    with pytest.raises(WorldError) as caught:
        await load(world)
    problem = "orgs[0].teams[0].members[1]: 'zed' is not a member of the organization"
    assert problem in caught.value.problems, caught.value.problems
    assert set((await counts(db)).values()) == {0}


async def test_team_member_of_an_organization_without_members_is_named(db, load):
    with pytest.raises(WorldError) as caught:
        await load(bad(["orgs", 0, "members"], ...))
    problem = "orgs[0].teams[0].members[0]: 'bob' is not a member of the organization"
    assert problem in caught.value.problems, caught.value.problems
    assert set((await counts(db)).values()) == {0}


async def test_an_account_that_already_exists_is_rejected(db, load):
    await load({"users": [{"name": "alice"}]})
    with pytest.raises(WorldError, match=r"users\[0\].name: account 'ALICE' already exists"):
        await load({"users": [{"name": "ALICE"}]})
    assert await db.fetchval("SELECT count(*) FROM core.accounts") == 1


async def test_later_world_can_refer_to_accounts_already_loaded(db, load):
    await load({"users": [{"name": "alice"}]})
    await load({"repos": [{"owner": "alice", "name": "later"}]})
    assert await db.fetchval("SELECT count(*) FROM core.repositories") == 1


def test_forge_load_reports_bad_entries_and_loads_nothing(database_url, tmp_path, capsys):
    path = tmp_path / "world.json"
    path.write_text(json.dumps(bad(["repos", 0, "releases", 0, "tag"], ...)))
    env = {"DATABASE_URL": database_url, "STORAGE_PATH": str(tmp_path / "s")}
    assert main(["load", str(path)], env=env) == 1
    err = capsys.readouterr().err
    assert "nothing was loaded" in err and "repos[0].releases[0].tag: missing" in err


def test_forge_load_reports_invalid_json(database_url, tmp_path, capsys):
    path = tmp_path / "world.json"
    path.write_text("{not json")
    assert main(["load", str(path)], env={"DATABASE_URL": database_url}) == 1
    assert "not valid json" in capsys.readouterr().err.lower()


def test_demo_world_loads_with_the_cli(database_url, tmp_path, capsys):
    env = {"DATABASE_URL": database_url, "STORAGE_PATH": str(tmp_path / "s")}
    assert main(["db", "migrate"], env=env) == 0
    assert main(["load", str(DEMO)], env=env) == 0
    assert "loaded" in capsys.readouterr().out
