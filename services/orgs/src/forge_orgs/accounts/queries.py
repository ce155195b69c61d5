"""The SQL of sign-in and the settings pages."""

from __future__ import annotations

from dataclasses import dataclass

from forge_common.db import Queryable
from forge_common.names import login_lookup


@dataclass(frozen=True, slots=True)
class Credentials:
    id: int
    name: str
    password_hash: str | None
    must_change_password: bool


async def credentials(db: Queryable, name: str) -> Credentials | None:
    """A user's password hash by name (any case, forge_common.names.login_lookup: a name no
    account can have matches none); organizations never sign in."""
    lookup = login_lookup(name)
    if lookup is None:
        return None
    row = await db.fetchrow(
        """SELECT id, name, password_hash, must_change_password FROM core.accounts
            WHERE kind = 'user' AND lower(name) = $1""",
        lookup,
    )
    return Credentials(**dict(row)) if row else None


async def password_hash_of(db: Queryable, user_id: int) -> str | None:
    value: str | None = await db.fetchval(
        "SELECT password_hash FROM core.accounts WHERE id = $1", user_id
    )
    return value


async def set_password_hash(db: Queryable, user_id: int, password_hash: str) -> None:
    """A new password: it no longer has to change."""
    await db.execute(
        """UPDATE core.accounts SET password_hash = $2, must_change_password = false
            WHERE id = $1""",
        user_id,
        password_hash,
    )


@dataclass(frozen=True, slots=True)
class OwnedOrg:
    id: int
    name: str


async def orgs_owned_by(db: Queryable, user_id: int) -> list[OwnedOrg]:
    """The organizations a user owns, by name: where the "New repository" page offers to create
    (a site admin may post any organization's id; the post checks as the API does)."""
    rows = await db.fetch(
        """SELECT a.id, a.name FROM core.org_members m JOIN core.accounts a ON a.id = m.org_id
            WHERE m.user_id = $1 AND m.role = 'owner' ORDER BY lower(a.name)""",
        user_id,
    )
    return [OwnedOrg(row["id"], row["name"]) for row in rows]
