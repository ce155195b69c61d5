"""`forge admin user create|change-password|list|delete|generate-access-token`: Gitea's command
names, flags and output (cmd/admin_user_*.go), so scripts written for `gitea admin user` work.

Two differences, on purpose (docs/accounts.md): a new user is never forced to change their
password unless `--must-change-password` is given, so a script can create an account and sign in;
`--password-stdin` reads the password from standard input, out of the shell's history and the
process list. The database is the configured one: DATABASE_URL, else the embedded cluster of
`forge dev` in `--data-dir` (the running one, or started for the command and stopped after).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import string
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from ..db import Conn, connect
from ..embedded_pg import EmbeddedPostgres
from ..errors import ApiError
from . import queries, users
from .models import Account
from .passwords import hash_password, password_problem
from .tokens import ScopeError, create_token, normalize_scopes

# Gitea's alphabet for --random-password (modules/auth/password: lower, upper, digits)
_RANDOM_ALPHABET = string.ascii_letters + string.digits


class AdminError(Exception):
    """A refusal: printed as `forge: <message>`, exit status 1."""


def add_admin_commands(commands: Any) -> None:
    admin = commands.add_parser("admin", help="administer users (Gitea's `admin user` commands)")
    admin.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".data"),
        help="the embedded database's folder when DATABASE_URL is unset (as forge dev)",
    )
    groups = admin.add_subparsers(dest="admin_command", required=True)
    user = groups.add_parser("user", help="create, list and delete users; passwords and tokens")
    verbs = user.add_subparsers(dest="user_command", required=True)

    create = verbs.add_parser("create", help="create a new user")
    create.add_argument("--username", "--name", dest="username", required=True)
    create.add_argument("--email", required=True)
    _password_flags(create)
    create.add_argument("--random-password", action="store_true")
    create.add_argument("--random-password-length", type=int, default=12)
    create.add_argument("--admin", action="store_true", help="the user is a site admin")
    create.add_argument("--must-change-password", action="store_true")
    create.add_argument("--full-name", default="")
    create.add_argument(
        "--access-token", action="store_true", help="also make a token named gitea-admin"
    )

    change = verbs.add_parser("change-password", help="set a user's password")
    change.add_argument("--username", "-u", required=True)
    _password_flags(change)
    change.add_argument("--must-change-password", action="store_true")

    listing = verbs.add_parser("list", help="list users")
    listing.add_argument("--admin", action="store_true", help="list only site admins")

    delete = verbs.add_parser("delete", help="delete a user by id, name or e-mail")
    delete.add_argument("--id", type=int)
    delete.add_argument("--username", "-u")
    delete.add_argument("--email", "-e")
    delete.add_argument(
        "--purge", action="store_true", help="delete the user's repositories with them"
    )

    token = verbs.add_parser("generate-access-token", help="make an access token for a user")
    token.add_argument("--username", "-u", required=True)
    token.add_argument("--token-name", "-t", default="gitea-admin")
    token.add_argument(
        "--scopes",
        default="all",
        help="comma-separated scopes (all): Gitea's read:/write: + repository, organization, "
        "user, admin, or forge's write:release (publishes releases, nothing else: for CI)",
    )
    token.add_argument("--raw", action="store_true", help="print only the token")


def _password_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--password", "-p")
    parser.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )


@contextmanager
def admin_database(env: dict[str, str], data_dir: Path) -> Iterator[str]:
    """The configured database's URL: DATABASE_URL, else the embedded cluster of `forge dev`."""
    url = env.get("DATABASE_URL")
    if url:
        yield url
        return
    # a running `forge dev`'s server is shared and left running; else started and stopped again
    pg = EmbeddedPostgres(data_dir / "postgres", durable=True)
    url = pg.start()
    try:
        yield url
    finally:
        pg.stop()


def _password(args: Any, stdin: TextIO, *, allow_random: bool) -> tuple[str, bool]:
    """(password, whether it was generated)."""
    given = [args.password is not None, args.password_stdin]
    if allow_random:
        given.append(args.random_password)
    if sum(given) > 1:
        raise AdminError("set only one of --password, --password-stdin and --random-password")
    if args.password_stdin:
        password = stdin.readline().rstrip("\r\n")
    elif args.password is not None:
        password = args.password
    elif allow_random and args.random_password:
        length = args.random_password_length
        if not 8 <= length <= 1024:
            raise AdminError("--random-password-length must be between 8 and 1024")
        return "".join(secrets.choice(_RANDOM_ALPHABET) for _ in range(length)), True
    else:
        choices = "--password, --password-stdin or --random-password"
        if not allow_random:
            choices = "--password or --password-stdin"
        raise AdminError(f"must set one of {choices}")
    problem = password_problem(password)
    if problem is not None:
        raise AdminError(f"the password {problem}")
    return password, False


async def _user(conn: Conn, name: str) -> Account:
    account = await users.user_by_name(conn, name)
    if account is None:
        raise AdminError(f"user does not exist [name: {name}]")
    return account


async def _create(conn: Conn, args: Any, stdin: TextIO, out: TextIO) -> None:
    password, generated = _password(args, stdin, allow_random=True)
    async with conn.transaction():
        account = await users.create_user(
            conn,
            name=args.username,
            email=args.email,
            password_hash=await hash_password(password),
            full_name=args.full_name,
            is_admin=args.admin,
            must_change_password=args.must_change_password,
        )
        secret = None
        if args.access_token:
            made = await create_token(conn, account.id, "gitea-admin", ("all",))
            assert made is not None  # a new user has no tokens
            secret = made[1]
    if generated:
        print(f"generated random password is '{password}'", file=out)
    if secret is not None:
        print(f"Access token was successfully created... {secret}", file=out)
    print(f"New user '{account.name}' has been successfully created!", file=out)


async def _change_password(conn: Conn, args: Any, stdin: TextIO, out: TextIO) -> None:
    password, _ = _password(args, stdin, allow_random=False)
    account = await _user(conn, args.username)
    await users.set_password(
        conn,
        account.id,
        await hash_password(password),
        must_change_password=args.must_change_password,
    )
    print(f"{account.name}'s password has been successfully updated!", file=out)


def _table(rows: Sequence[Sequence[str]]) -> str:
    """Go's tabwriter as Gitea sets it up (minwidth 5, padding 1, spaces): every column but the
    last is as wide as its widest cell plus one, at least 5."""
    widths = [max(5, max(len(row[i]) for row in rows) + 1) for i in range(len(rows[0]) - 1)]
    return "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + row[-1]
        + "\n"
        for row in rows
    )


async def _list(conn: Conn, args: Any, out: TextIO) -> None:
    found = await users.list_users(conn, admins_only=args.admin)
    if args.admin:
        rows = [["ID", "Username", "Email", "IsActive"]]
        rows += [[str(u.id), u.name, u.email, "true"] for u in found]
    else:
        rows = [["ID", "Username", "Email", "IsActive", "IsAdmin", "2FA"]]
        rows += [
            [str(u.id), u.name, u.email, "true", str(u.is_admin).lower(), "false"] for u in found
        ]
    out.write(_table(rows))


async def _delete(conn: Conn, args: Any) -> None:
    if args.id is None and args.username is None and args.email is None:
        raise AdminError("You must provide the id, username or email of a user to delete")
    if args.email is not None:
        row = await conn.fetchrow(queries.USER_NAME_BY_EMAIL, args.email)
        if row is None:
            raise AdminError(f"user does not exist [email: {args.email}]")
        account = await _user(conn, row["name"])
    elif args.username is not None:
        account = await _user(conn, args.username)
    else:
        row = await conn.fetchrow(queries.USER_NAME_BY_ID, args.id)
        if row is None:
            raise AdminError(f"user does not exist [uid: {args.id}]")
        account = await _user(conn, row["name"])
    if args.username is not None and account.name.lower() != args.username.strip().lower():
        raise AdminError(
            f"The user {account.name} who has email {args.email} does not match the provided "
            f"username {args.username}"
        )
    if args.id is not None and account.id != args.id:
        raise AdminError(f"The user {account.name} does not match the provided id {args.id}")
    async with conn.transaction():
        await users.delete_user(conn, account, purge=args.purge)


async def _generate_token(conn: Conn, args: Any, out: TextIO) -> None:
    account = await _user(conn, args.username)
    try:
        scopes = normalize_scopes(args.scopes.split(","))
    except ScopeError as exc:
        raise AdminError(str(exc)) from None
    if not scopes:
        raise AdminError("access token must have a scope")
    made = await create_token(conn, account.id, args.token_name, scopes)
    if made is None:
        raise AdminError("access token name has been used already")
    secret = made[1]
    print(secret if args.raw else f"Access token was successfully created: {secret}", file=out)


async def run_admin(
    args: Any,
    database_url: str,
    migrate: Callable[[str], Awaitable[object]],
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> None:
    """Run one `forge admin user` command; AdminError (or ApiError from the shared checks) when
    it is refused."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    await migrate(database_url)  # a fresh clone may run this before `make run` ever did
    conn = await connect(database_url)
    try:
        verb = args.user_command
        if verb == "create":
            await _create(conn, args, stdin, out)
        elif verb == "change-password":
            await _change_password(conn, args, stdin, out)
        elif verb == "list":
            await _list(conn, args, out)
        elif verb == "delete":
            await _delete(conn, args)
        else:
            await _generate_token(conn, args, out)
    finally:
        await conn.close()


def main_admin(args: Any, env: dict[str, str], migrate: Callable[[str], Awaitable[object]]) -> int:
    try:
        with admin_database(env, args.data_dir) as url:
            asyncio.run(run_admin(args, url, migrate))
    except (AdminError, ApiError) as exc:
        print(f"forge: {exc}", file=sys.stderr)
        return 1
    return 0
