"""`repos[i]`: repositories with their collaborators. Releases belong to the releases service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg

from .. import checks
from .names import Names

# What a collaborator or a team may do with a repository.
PERMISSIONS = frozenset({"read", "write", "admin"})


def declared_repos(world: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(lower owner, lower name) of each repository in the file that gives both as strings."""
    return {
        (repo["owner"].lower(), repo["name"].lower())
        for _, repo in checks.objects(world, "repos")
        if isinstance(repo.get("owner"), str) and isinstance(repo.get("name"), str)
    }


def validate_repos(repos: list[dict[str, Any]], names: Names, errors: list[str]) -> None:
    """`names` holds every account, and the repositories stored before this file."""
    repo_names = []
    for i, repo in enumerate(repos):
        path = f"repos[{i}]"
        repo_names.append((f"{path}.name", _validate_repo(repo, path, names, errors)))
    checks.unique(repo_names, errors, "repository")


def _validate_repo(repo: Mapping[str, Any], path: str, names: Names, errors: list[str]) -> str:
    """The repository's `owner/name`."""
    owner = checks.text(repo, "owner", path, errors, required=True)
    name = checks.text(repo, "name", path, errors, required=True, pattern=checks.REPO_NAME)
    if owner and not names.has_account(owner):
        errors.append(f"{path}.owner: unknown account {owner!r}")
    for key in ("private", "public_landing", "public_releases", "archived"):
        checks.flag(repo, key, path, errors)
    checks.text(repo, "description", path, errors)
    for j, collaborator in enumerate(checks.entries(repo, "collaborators", path, errors)):
        _validate_collaborator(collaborator, f"{path}.collaborators[{j}]", names, errors)
    if names.has_repo(owner, name):
        errors.append(f"{path}: repository {owner}/{name} already exists")
    return f"{owner}/{name}"


def _validate_collaborator(
    collaborator: Mapping[str, Any], path: str, names: Names, errors: list[str]
) -> None:
    user = checks.text(collaborator, "user", path, errors, required=True)
    if user and not names.is_user(user):
        errors.append(f"{path}.user: unknown user {user!r}")
    checks.text(collaborator, "permission", path, errors, required=True, choices=PERMISSIONS)


async def load_repos(
    conn: asyncpg.Connection[Any],
    repos: Iterable[Mapping[str, Any]],
    accounts: Mapping[str, int],
) -> dict[tuple[str, str], int]:
    """(lower owner, lower name) → id of each repository added."""
    ids = {}
    for repo in repos:
        owner = repo["owner"].lower()
        repo_id = await _insert_repo(conn, accounts[owner], repo)
        ids[(owner, repo["name"].lower())] = repo_id
        for collaborator in repo.get("collaborators", []):
            user_id = accounts[collaborator["user"].lower()]
            await _insert_collaborator(conn, repo_id, user_id, collaborator["permission"])
    return ids


async def _insert_repo(
    conn: asyncpg.Connection[Any], owner_id: int, repo: Mapping[str, Any]
) -> int:
    repo_id: int = await conn.fetchval(
        """INSERT INTO core.repositories
               (owner_id, name, description, private, public_landing, public_releases, archived)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id""",
        owner_id,
        repo["name"],
        repo.get("description", ""),
        repo.get("private", False),
        repo.get("public_landing", False),
        repo.get("public_releases", False),
        repo.get("archived", False),
    )
    return repo_id


async def _insert_collaborator(
    conn: asyncpg.Connection[Any], repo_id: int, user_id: int, permission: str
) -> None:
    await conn.execute(
        "INSERT INTO core.collaborators (repo_id, user_id, permission) VALUES ($1, $2, $3)",
        repo_id,
        user_id,
        permission,
    )
