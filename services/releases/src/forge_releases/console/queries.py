"""SQL of the console's repository settings page: the three access flags of a repository.

The smallest write the page needs, kept here until the repository administration API (a
Gitea-shaped `PATCH /api/v1/repos/{owner}/{repo}`) offers one function for both.
"""

from __future__ import annotations

from forge_common.db import Queryable


async def repo_flags(db: Queryable, repo_id: int) -> tuple[bool, bool, bool]:
    row = await db.fetchrow(
        "SELECT private, public_landing, public_releases FROM core.repositories WHERE id = $1",
        repo_id,
    )
    if row is None:
        return (True, False, False)
    return (row["private"], row["public_landing"], row["public_releases"])


async def set_repo_flags(
    db: Queryable, repo_id: int, *, private: bool, public_landing: bool, public_releases: bool
) -> None:
    """The triggers on core.repositories tell every replica's cache (read/cache.py)."""
    await db.execute(
        """UPDATE core.repositories
              SET private = $2, public_landing = $3, public_releases = $4, updated_at = now()
            WHERE id = $1""",
        repo_id,
        private,
        public_landing,
        public_releases,
    )
