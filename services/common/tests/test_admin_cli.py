"""`forge admin user ...` (docs/accounts.md "forge admin"): Gitea's commands, flags and output,
against the configured database: DATABASE_URL, or with none the embedded cluster of `forge dev`
(the running one, or one started and stopped for the command), with no URL to copy anywhere."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from forge_common.accounts.passwords import verify_password
from forge_common.cli import main
from forge_common.embedded_pg import EmbeddedPostgres, find_bindir
from forge_testing.plugin import run_sync

FORGE = str(Path(sys.executable).with_name("forge"))


async def _scopes(url: str) -> dict[str, list[str]]:
    conn = await asyncpg.connect(url)
    try:
        return dict(await conn.fetch("SELECT name, scopes FROM core.access_tokens"))
    finally:
        await conn.close()


def forge(env: dict[str, str], *argv: str) -> int:
    return main(["admin", "user", *argv], env={**env, "LOG_LEVEL": "WARNING"})


@pytest.fixture
def env(database_url: str) -> dict[str, str]:
    return {"DATABASE_URL": database_url}


async def _row(url: str, name: str) -> Any:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetchrow(
            "SELECT id, is_admin, must_change_password, password_hash, email "
            "FROM core.accounts WHERE name = $1",
            name,
        )
    finally:
        await conn.close()


def test_passwords_are_hashed_with_argon2_parameters_when_set(env: dict[str, str]) -> None:
    argon2 = {"ARGON2_PARAMETERS": "t=2,m=19456,p=1"}  # OWASP's 19 MiB x 2
    create = ["create", "--username", "ops", "--email", "ops@example.com"]
    assert forge({**env, **argon2}, *create, "--password", "first-password") == 0
    stored = run_sync(_row(env["DATABASE_URL"], "ops"))["password_hash"]
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert forge({**env, "ARGON2_PARAMETERS": "t=2"}, "list") == 1  # said, not guessed


def test_create_change_password_list_and_delete(env: dict[str, str], capsys: Any) -> None:
    url = env["DATABASE_URL"]
    assert (
        forge(
            env,
            "create",
            "--username",
            "root",
            "--email",
            "root@example.com",
            "--password",
            "first-password",
            "--admin",
        )
        == 0
    )
    assert capsys.readouterr().out == "New user 'root' has been successfully created!\n"
    row = run_sync(_row(url, "root"))
    assert row["is_admin"] and not row["must_change_password"]  # never forced unless asked
    assert run_sync(verify_password(row["password_hash"], "first-password"))
    assert "first-password" not in row["password_hash"]

    assert (
        forge(
            env,
            "change-password",
            "--username",
            "root",
            "--password",
            "second-password",
            "--must-change-password",
        )
        == 0
    )
    assert capsys.readouterr().out == "root's password has been successfully updated!\n"
    row = run_sync(_row(url, "root"))
    assert row["must_change_password"]
    assert run_sync(verify_password(row["password_hash"], "second-password"))

    assert (
        forge(env, "create", "--username", "bob", "--email", "bob@example.com", "--random-password")
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    generated = re.fullmatch(r"generated random password is '([A-Za-z0-9]{12})'", out[0])
    assert generated and out[1] == "New user 'bob' has been successfully created!"
    assert run_sync(verify_password(run_sync(_row(url, "bob"))["password_hash"], generated[1]))

    assert forge(env, "list") == 0
    lines = capsys.readouterr().out.splitlines()
    # Go's tabwriter as Gitea uses it: columns as wide as their widest cell plus one, at least 5
    assert lines[0] == "ID   Username Email            IsActive IsAdmin 2FA"
    assert re.fullmatch(r"\d+ +root +root@example.com +true +true +false", lines[1])
    assert re.fullmatch(r"\d+ +bob +bob@example.com +true +false +false", lines[2])
    assert forge(env, "list", "--admin") == 0
    admins = capsys.readouterr().out.splitlines()
    assert admins[0].split() == ["ID", "Username", "Email", "IsActive"] and len(admins) == 2

    assert forge(env, "delete", "--username", "bob") == 0
    assert run_sync(_row(url, "bob")) is None
    assert forge(env, "delete", "--username", "bob") == 1
    assert "user does not exist [name: bob]" in capsys.readouterr().err


def test_password_from_standard_input_stays_out_of_argv(
    env: dict[str, str], capsys: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("from-stdin-password\n"))
    assert (
        forge(env, "create", "--username", "ci", "--email", "ci@example.com", "--password-stdin")
        == 0
    )
    row = run_sync(_row(env["DATABASE_URL"], "ci"))
    assert run_sync(verify_password(row["password_hash"], "from-stdin-password"))


def test_refusals_say_why_and_change_nothing(env: dict[str, str], capsys: Any) -> None:
    base = ["create", "--username", "eve", "--email", "eve@example.com"]
    cases = [
        ([*base], "must set one of --password, --password-stdin or --random-password"),
        ([*base, "--password", "short"], "the password must be at least 8 characters"),
        ([*base, "--password", "long-enough", "--random-password"], "set only one of"),
        (
            ["create", "--username", "api", "--email", "a@example.com", "--password", "x" * 9],
            "name is reserved [name: api]",
        ),
        (
            ["create", "--username", "a b", "--email", "a@example.com", "--password", "x" * 9],
            "name is invalid",
        ),
        (
            ["create", "--username", "eve", "--email", "nope", "--password", "x" * 9],
            "e-mail invalid",
        ),
        ([*base, "--password", "x" * 9, "--full-name", "Eve \u202egpj.exe"], "full_name"),
        (["delete"], "You must provide the id, username or email of a user to delete"),
        (["generate-access-token", "--username", "nobody"], "user does not exist"),
    ]
    for argv, message in cases:
        assert forge(env, *argv) == 1, argv
        assert message in capsys.readouterr().err, argv
    assert forge(env, "list") == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # the header only


def test_generated_tokens_print_as_gitea_and_carry_their_scopes(
    env: dict[str, str], capsys: Any
) -> None:
    assert (
        forge(
            env,
            "create",
            "--username",
            "ci",
            "--email",
            "ci@example.com",
            "--password",
            "ci-password",
            "--access-token",
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"Access token was successfully created\.\.\. [0-9a-f]{40}", out[0])
    assert (
        forge(
            env,
            "generate-access-token",
            "--username",
            "ci",
            "--token-name",
            "publish",
            "--scopes",
            "write:repository,read:repository",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert re.fullmatch(r"Access token was successfully created: [0-9a-f]{40}\n", out)
    assert forge(env, "generate-access-token", "-u", "ci", "-t", "raw", "--raw") == 0
    assert re.fullmatch(r"[0-9a-f]{40}\n", capsys.readouterr().out)
    assert forge(env, "generate-access-token", "-u", "ci", "-t", "raw") == 1
    assert "access token name has been used already" in capsys.readouterr().err
    assert forge(env, "generate-access-token", "-u", "ci", "-t", "x", "--scopes", "write:all") == 1
    assert "invalid access token scope" in capsys.readouterr().err
    # forge's own scope for CI (docs/accounts.md "Scopes"), named in the command's help
    assert (
        forge(env, "generate-access-token", "-u", "ci", "-t", "ci", "--scopes", "write:release")
        == 0
    )
    capsys.readouterr()
    with pytest.raises(SystemExit):
        forge(env, "generate-access-token", "--help")
    assert "write:release" in capsys.readouterr().out
    scopes = run_sync(_scopes(env["DATABASE_URL"]))
    assert scopes == {
        "gitea-admin": ["all"],
        "publish": ["write:repository"],
        "raw": ["all"],
        "ci": ["write:release"],
    }


def test_a_user_who_owns_repositories_is_kept_unless_purged(
    env: dict[str, str], capsys: Any, tmp_path: Path
) -> None:
    world = tmp_path / "world.json"
    world.write_text('{"users": [{"name": "olive"}], "repos": [{"owner": "olive", "name": "a"}]}')
    assert main(["load", str(world)], env=env) == 0
    assert forge(env, "delete", "--username", "olive") == 1
    assert "user still has ownership of repositories" in capsys.readouterr().err
    assert forge(env, "delete", "--username", "olive", "--purge") == 0


@pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL binaries here")
def test_without_database_url_it_uses_the_embedded_cluster_running_or_not() -> None:
    folder = Path(tempfile.mkdtemp(prefix="forge-admin-"))
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    data = ["admin", "--data-dir", str(folder)]
    running = EmbeddedPostgres(folder / "postgres")  # as `forge dev --data-dir` runs it
    try:
        url = running.start()
        done = subprocess.run(
            [
                FORGE,
                *data,
                "user",
                "create",
                "--username",
                "root",
                "--email",
                "r@example.com",
                "--password-stdin",
            ],
            input="a-long-password\n",
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert (run_sync(_row(url, "root"))) is not None  # in the running server, left running
        running.stop()
        # nothing running: the command starts the cluster, and stops it when done
        listed = subprocess.run(
            [FORGE, *data, "user", "list"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert listed.returncode == 0, listed.stderr
        assert "root" in listed.stdout
        assert running.running_port() is None
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)
