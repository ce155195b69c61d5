"""The accounts and repositories an entry may clash with or refer to: those already stored, then
those the file adds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class Names:
    accounts: Mapping[str, str]  # lower-cased name → "user" or "org"
    repos: Set[tuple[str, str]]  # (lower owner, lower name)

    def is_user(self, name: str) -> bool:
        return self.accounts.get(name.lower()) == "user"

    def has_account(self, name: str) -> bool:
        return name.lower() in self.accounts

    def has_repo(self, owner: str, name: str) -> bool:
        return (owner.lower(), name.lower()) in self.repos

    def with_accounts(self, kind: str, names: Iterable[str]) -> Names:
        """`names` added as accounts of `kind`; a name already known keeps its kind."""
        return Names({**{name.lower(): kind for name in names}, **self.accounts}, self.repos)

    def with_repos(self, repos: Set[tuple[str, str]]) -> Names:
        return Names(self.accounts, self.repos | repos)


async def stored_names(conn: asyncpg.Connection[Any]) -> Names:
    """What the database holds before the file is loaded."""
    kinds = {
        r["lname"]: r["kind"]
        for r in await conn.fetch("SELECT lower(name) AS lname, kind FROM core.accounts")
    }
    return Names(kinds, frozenset(await stored_repo_ids(conn)))


async def stored_account_ids(conn: asyncpg.Connection[Any]) -> dict[str, int]:
    """Lower-cased name → id of every stored account."""
    return {
        r["lname"]: r["id"]
        for r in await conn.fetch("SELECT lower(name) AS lname, id FROM core.accounts")
    }


async def stored_repo_ids(conn: asyncpg.Connection[Any]) -> dict[tuple[str, str], int]:
    """(lower owner, lower name) → id of every stored repository."""
    return {
        (r["owner"], r["repo"]): r["id"]
        for r in await conn.fetch(
            "SELECT lower(a.name) AS owner, lower(r.name) AS repo, r.id "
            "FROM core.repositories r JOIN core.accounts a ON a.id = r.owner_id"
        )
    }
