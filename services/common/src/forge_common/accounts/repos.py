"""Repositories: create, edit (visibility, public landing, public releases, description,
archived, name), delete; collaborators (`/api/v1/user/repos`, `/api/v1/orgs/{org}/repos`,
`/api/v1/repos/{owner}/{repo}`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import asyncpg

from ..db import Conn
from ..errors import Conflict, Unprocessable
from ..names import is_repo_name
from . import queries
from .events import record
from .models import Account, Repository
from .queries import repository_by_name

MAX_DESCRIPTION = 2048  # Gitea's limit on a repository description
EDITABLE = ("name", "description", "private", "public_landing", "public_releases", "archived")
COLLABORATOR_PERMISSIONS = ("read", "write", "admin")


def check_repo_name(name: str) -> None:
    if not is_repo_name(name) or name in (".", ".."):
        raise Unprocessable(
            f"name is invalid [{name}]: must be valid alpha or numeric or dash(-_) or dot "
            "characters, at most 100",
            field="name",
        )


def check_description(description: str) -> None:
    if len(description) > MAX_DESCRIPTION:
        raise Unprocessable(
            f"description must be at most {MAX_DESCRIPTION} characters", field="description"
        )


class RepoExists(Conflict):
    def __init__(self) -> None:
        # Gitea's words (routers/api/v1/repo/repo.go CreateUserRepo)
        super().__init__("The repository with the same name already exists.")


def _payload(owner: Account, repo: Repository) -> dict[str, Any]:
    return {
        "repo_id": repo.id,
        "repo": repo.name,
        "owner_id": owner.id,
        "owner": owner.name,
        "private": repo.private,
    }


async def create_repo(
    conn: Conn,
    owner: Account,
    actor_id: int,
    *,
    name: str,
    description: str = "",
    private: bool = False,
) -> Repository:
    check_repo_name(name)
    check_description(description)
    try:
        async with conn.transaction():
            await conn.execute(
                queries.INSERT_REPOSITORY,
                owner.id,
                name,
                description,
                private,
            )
    except asyncpg.UniqueViolationError:
        raise RepoExists() from None
    repo = await repository_by_name(conn, owner.id, name)
    assert repo is not None
    await record(
        conn,
        "repository.created",
        _payload(owner, repo),
        actor_id=actor_id,
        repo_id=repo.id,
        org_id=owner.id if owner.is_org else None,
    )
    return repo


async def update_repo(
    conn: Conn, owner: Account, repo: Repository, actor_id: int, changes: Mapping[str, Any]
) -> Repository:
    """Apply `changes` (a subset of EDITABLE, already validated); an event names what changed."""
    changed = {k: v for k, v in changes.items() if getattr(repo, k) != v}
    if not changed:
        return repo
    if "name" in changed:
        check_repo_name(changed["name"])
    try:
        async with conn.transaction():
            await conn.execute(
                queries.update_repository_sql(changed),
                repo.id,
                *changed.values(),
            )
    except asyncpg.UniqueViolationError:
        raise Unprocessable(
            f"repository already exists [uname: {owner.name}, name: {changed['name']}]",
            field="name",
        ) from None
    updated = await repository_by_name(conn, owner.id, changed.get("name", repo.name))
    assert updated is not None
    await record(
        conn,
        "repository.updated",
        {**_payload(owner, updated), "changed": sorted(changed)},
        actor_id=actor_id,
        repo_id=repo.id,
        org_id=owner.id if owner.is_org else None,
        audit_changes={name: (getattr(repo, name), value) for name, value in changed.items()},
    )
    return updated


async def delete_repo(conn: Conn, owner: Account, repo: Repository, actor_id: int) -> None:
    await conn.execute(queries.DELETE_REPOSITORY, repo.id)
    # the envelope's repo_id would name a row that is gone: the payload carries it
    await record(
        conn,
        "repository.deleted",
        _payload(owner, repo),
        actor_id=actor_id,
        org_id=owner.id if owner.is_org else None,
    )


async def set_collaborator(
    conn: Conn, owner: Account, repo: Repository, user: Account, permission: str, actor_id: int
) -> None:
    before = await conn.fetchval(queries.SET_COLLABORATOR, repo.id, user.id, permission)
    if before == permission:
        return
    await record(
        conn,
        "repository.collaborator.added",
        {**_payload(owner, repo), "user_id": user.id, "login": user.name, "permission": permission},
        actor_id=actor_id,
        repo_id=repo.id,
        org_id=owner.id if owner.is_org else None,
        audit_changes={"permission": (before, permission)},
    )


async def remove_collaborator(
    conn: Conn, owner: Account, repo: Repository, user: Account, actor_id: int
) -> bool:
    removed = await conn.fetchval(queries.DELETE_COLLABORATOR, repo.id, user.id)
    if removed:
        await record(
            conn,
            "repository.collaborator.removed",
            {**_payload(owner, repo), "user_id": user.id, "login": user.name},
            actor_id=actor_id,
            repo_id=repo.id,
            org_id=owner.id if owner.is_org else None,
        )
    return bool(removed)
