"""Users: create, change the password, list, delete (`forge admin user`, `POST
/api/v1/admin/users`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from ..db import Conn, Queryable
from ..errors import Unprocessable
from ..names import display_name_problem, is_account_name
from . import queries
from .models import Account
from .queries import account_by_name
from .sessions import end_other_sessions

# Names that would shadow a route of this server (`/user/login`, `/api/...`, `/avatars/...`) or
# that Gitea reserves: no account may take them. Gitea answers 422 "name is reserved".
RESERVED_NAMES = frozenset(
    {
        "admin",
        "api",
        "assets",
        "avatars",
        "explore",
        "healthz",
        "internal",
        "login",
        "metrics",
        "org",
        "orgs",
        "readyz",
        "repo",
        "user",
        "users",
    }
)


def name_problem(name: str) -> str | None:
    """Gitea's message for a name no account can take; None when it can."""
    if name.lower() in RESERVED_NAMES:
        return f"name is reserved [name: {name}]"
    if not is_account_name(name):
        return (
            f"name is invalid [{name}]: must be valid alpha or numeric or dash(-_) or dot "
            "characters, at most 39, starting with a letter or digit"
        )
    return None


def check_name(name: str, field: str = "username") -> None:
    problem = name_problem(name)
    if problem is not None:
        raise Unprocessable(problem, field=field)


def check_email(email: str) -> None:
    # Gitea's own check is this loose too (an @ with something on each side); mail is not sent
    local, at, domain = email.partition("@")
    if not at or not local or not domain or len(email) > 254 or not email.isprintable():
        raise Unprocessable(f"e-mail invalid [email: {email}]", field="email")


def check_full_name(full_name: str) -> None:
    """The world loader's rule for a display name (names.display_name_problem: no control, format
    or bidi character, at most 255 characters), held on every path that stores a full name."""
    if full_name and (problem := display_name_problem(full_name, max_length=255)):
        raise Unprocessable(f"full_name {problem}", field="full_name")


async def email_taken(db: Queryable, email: str) -> bool:
    found = await db.fetchval(queries.USER_EMAIL_TAKEN, email)
    return bool(found)


async def insert_account(conn: Conn, kind: str, name: str, **columns: object) -> Account:
    """A new user or organization; 422 Gitea's "user already exists" when the name is taken
    (names are unique across users and organizations); 422 for a full name the display-name
    rule refuses."""
    full_name = columns.get("full_name")
    if isinstance(full_name, str):
        check_full_name(full_name)
    try:
        async with conn.transaction():  # a savepoint: the caller's transaction stays usable
            await conn.execute(
                queries.insert_account_sql(columns),
                kind,
                name,
                *columns.values(),
            )
    except asyncpg.UniqueViolationError:
        raise Unprocessable(f"user already exists [name: {name}]", field="username") from None
    account = await account_by_name(conn, name)
    assert account is not None
    return account


async def create_user(
    conn: Conn,
    *,
    name: str,
    email: str,
    password_hash: str,
    full_name: str = "",
    is_admin: bool = False,
    must_change_password: bool = False,
) -> Account:
    check_name(name)
    check_email(email)
    if await email_taken(conn, email):
        raise Unprocessable(f"e-mail already in use [email: {email}]", field="email")
    return await insert_account(
        conn,
        "user",
        name,
        email=email,
        full_name=full_name,
        is_admin=is_admin,
        password_hash=password_hash,
        must_change_password=must_change_password,
    )


async def user_by_name(db: Queryable, name: str) -> Account | None:
    account = await account_by_name(db, name) if is_account_name(name) else None
    return account if account is not None and not account.is_org else None


async def set_password(
    db: Queryable, user_id: int, password_hash: str, *, must_change_password: bool
) -> None:
    """A password set by an administrator (`forge admin user change-password`): every browser
    session of the user ends, since whoever held the old password may hold one of them; tokens
    stay (docs/accounts.md "Sessions")."""
    await db.execute(
        queries.SET_PASSWORD,
        user_id,
        password_hash,
        must_change_password,
    )
    await end_other_sessions(db, user_id, None)


USER_EDITABLE = (
    "email",
    "full_name",
    "website",
    "location",
    "description",
    "is_admin",
    "password_hash",
    "must_change_password",
)


async def update_user(conn: Conn, user: Account, changes: dict[str, object]) -> Account:
    """Apply `changes` (columns of USER_EDITABLE, already validated); 422 when the new e-mail is
    another user's, or for a full name the display-name rule refuses."""
    full_name = changes.get("full_name")
    if isinstance(full_name, str):
        check_full_name(full_name)
    email = changes.get("email")
    if isinstance(email, str) and email.lower() != user.email.lower():
        check_email(email)
        if await email_taken(conn, email):
            raise Unprocessable(f"e-mail already in use [email: {email}]", field="email")
    if changes:
        await conn.execute(queries.update_account_sql(changes), user.id, *changes.values())
    if "password_hash" in changes:  # an administrator's reset: as set_password
        await end_other_sessions(conn, user.id, None)
    updated = await account_by_name(conn, user.name)
    assert updated is not None
    return updated


@dataclass(frozen=True, slots=True)
class UserRow:
    id: int
    name: str
    email: str
    is_admin: bool
    must_change_password: bool
    created_at: datetime


async def list_users(db: Queryable, *, admins_only: bool = False) -> list[UserRow]:
    rows = await db.fetch(queries.LIST_USERS, admins_only)
    return [UserRow(**dict(row)) for row in rows]


async def lock_owners(conn: Conn, org_ids: list[int]) -> None:
    """Lock the organizations' rows (in id order: no deadlock between two callers) until the
    transaction ends: every change that may take an owner away holds it while it counts owners."""
    await conn.execute(queries.LOCK_ACCOUNTS, org_ids)


async def delete_user(conn: Conn, user: Account, *, purge: bool = False) -> None:
    """Gitea's rule: a user who still owns repositories is kept unless `purge` (then they go with
    the user); the last owner of an organization is kept always (the organization would have
    nobody to manage it)."""
    if not purge and await conn.fetchval(queries.OWNS_REPOSITORIES, user.id):
        raise Unprocessable(f"user still has ownership of repositories [uid: {user.id}]")
    # the organizations they own, locked as orgs.remove_member locks them: two owners deleted
    # (or one deleted, one removed) at once cannot both pass the count below
    owned = await conn.fetch(queries.ORGS_OWNED, user.id)
    await lock_owners(conn, [row["org_id"] for row in owned])
    sole = await conn.fetchval(queries.SOLE_OWNED_ORG, user.id)
    if sole is not None:
        raise Unprocessable(
            f"user is the last owner of organization {sole} [uid: {user.id}]: "
            "make another owner first"
        )
    await conn.execute(queries.DELETE_ACCOUNT, user.id)
