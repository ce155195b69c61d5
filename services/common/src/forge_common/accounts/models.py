"""Looking up accounts and repositories by name (names are unique case-insensitively)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..names import is_account_name

if TYPE_CHECKING:
    from ..db import Queryable


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    kind: str
    name: str
    full_name: str
    email: str
    description: str
    website: str
    location: str
    visibility: str
    is_admin: bool
    created_at: datetime

    @property
    def is_org(self) -> bool:
        return self.kind == "org"


@dataclass(frozen=True, slots=True)
class Repository:
    id: int
    owner_id: int
    name: str
    description: str
    private: bool
    public_landing: bool
    public_releases: bool
    archived: bool
    created_at: datetime
    updated_at: datetime


_ACCOUNT_COLUMNS = (
    "id, kind, name, full_name, email, description, website, location, visibility, is_admin, "
    "created_at"
)
_REPO_COLUMNS = (
    "id, owner_id, name, description, private, public_landing, public_releases, archived, "
    "created_at, updated_at"
)


async def account_by_name(db: Queryable, name: str) -> Account | None:
    """The account of that name, any case; None for a name no account can have, which
    PostgreSQL's `lower()` could otherwise fold onto one (`vİct` onto `vict`, names.py)."""
    if not is_account_name(name):
        return None
    row = await db.fetchrow(
        f"SELECT {_ACCOUNT_COLUMNS} FROM core.accounts WHERE lower(name) = lower($1)", name
    )
    return Account(**dict(row)) if row else None


async def repository_by_name(db: Queryable, owner_id: int, name: str) -> Repository | None:
    row = await db.fetchrow(
        f"SELECT {_REPO_COLUMNS} FROM core.repositories "
        "WHERE owner_id = $1 AND lower(name) = lower($2)",
        owner_id,
        name,
    )
    return Repository(**dict(row)) if row else None
