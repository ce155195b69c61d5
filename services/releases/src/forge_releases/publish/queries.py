"""Write-side queries of the release API: plain async functions with inline SQL.

Every function runs on the caller's connection, inside the caller's transaction, so the change and
its outbox event commit together. Reads that return models reuse the read side (read/queries.py).

Asset files are shared by content (storage.py): a transaction-scoped advisory lock (`lock_blobs`)
orders "move the file into place and insert the row" against "no row references the file any
more, delete it", so a file is never deleted under a new reference.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge_common.db import Conn, Queryable

from ..models import Asset, Release
from ..read.queries import release_by_id

_RETURNING_ASSET = (
    "RETURNING id, release_id, name, size, content_type, sha256, uuid::text AS uuid, "
    "download_count, created_at"
)


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """What a write needs beyond the resolved path: the owning organization and archive state."""

    org_id: int | None
    archived: bool


@dataclass(frozen=True, slots=True)
class ReleaseFields:
    """The values of a release a client may set."""

    tag: str
    target: str
    title: str
    note: str
    draft: bool
    prerelease: bool
    rollout: int | None = None  # staged rollout percentage (feeds/), None: everyone


@dataclass(frozen=True, slots=True)
class NewAsset:
    release_id: int
    name: str
    size: int
    content_type: str
    sha1: str
    sha256: str
    sha512: str
    uploader_id: int


async def repo_facts(conn: Queryable, repo_id: int) -> RepoFacts | None:
    row = await conn.fetchrow(
        """SELECT CASE WHEN o.kind = 'org' THEN o.id END AS org_id, r.archived
             FROM core.repositories r JOIN core.accounts o ON o.id = r.owner_id
            WHERE r.id = $1""",
        repo_id,
    )
    return RepoFacts(row["org_id"], row["archived"]) if row else None


async def insert_release(
    conn: Conn, repo_id: int, fields: ReleaseFields, publisher_id: int
) -> Release | None:
    """The new release, or None when a release with this tag exists. A bare tag of that name
    becomes the release (as in Gitea): a bare tag is not a release, so publishing on it is normal.
    ON CONFLICT makes the check and the insert one step, so two racing creators get one 201."""
    row = await conn.fetchrow(
        """INSERT INTO releases.releases
               (repo_id, tag, target, title, note, draft, prerelease, publisher_id, rollout)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (repo_id, tag) DO UPDATE
              SET target = EXCLUDED.target, title = EXCLUDED.title, note = EXCLUDED.note,
                  draft = EXCLUDED.draft, prerelease = EXCLUDED.prerelease,
                  rollout = EXCLUDED.rollout, publisher_id = EXCLUDED.publisher_id,
                  tag_only = false,
                  created_at = now(), updated_at = now()
            WHERE releases.tag_only
           RETURNING id""",
        repo_id,
        fields.tag,
        fields.target,
        fields.title,
        fields.note,
        fields.draft,
        fields.prerelease,
        publisher_id,
        fields.rollout,
    )
    if row is None:
        return None
    return await release_by_id(conn, repo_id, row["id"])


async def lock_release(conn: Conn, repo_id: int, release_id: int) -> Release | None:
    """The release (not a bare tag), locked for the rest of the transaction."""
    locked = await conn.fetchval(
        """SELECT id FROM releases.releases
            WHERE id = $1 AND repo_id = $2 AND NOT tag_only FOR UPDATE""",
        release_id,
        repo_id,
    )
    if locked is None:
        return None
    return await release_by_id(conn, repo_id, release_id)


async def tag_taken(conn: Conn, repo_id: int, tag: str, *, other_than: int) -> bool:
    """True when another release or bare tag of the repository has `tag`."""
    taken: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM releases.releases WHERE repo_id = $1 AND tag = $2 "
        "AND id <> $3)",
        repo_id,
        tag,
        other_than,
    )
    return taken


async def update_release(conn: Conn, release_id: int, fields: ReleaseFields) -> None:
    await conn.execute(
        """UPDATE releases.releases
              SET tag = $2, target = $3, title = $4, note = $5, draft = $6, prerelease = $7,
                  rollout = $8, updated_at = now()
            WHERE id = $1""",
        release_id,
        fields.tag,
        fields.target,
        fields.title,
        fields.note,
        fields.draft,
        fields.prerelease,
        fields.rollout,
    )


async def delete_release(conn: Conn, release_id: int) -> None:
    """Deletes the release; its asset rows go with it (ON DELETE CASCADE)."""
    await conn.execute("DELETE FROM releases.releases WHERE id = $1", release_id)


async def asset_name_taken(conn: Conn, release_id: int, name: str) -> bool:
    taken: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM releases.assets WHERE release_id = $1 AND name = $2)",
        release_id,
        name,
    )
    return taken


async def insert_asset(conn: Conn, asset: NewAsset) -> Asset:
    row = await conn.fetchrow(
        f"""INSERT INTO releases.assets
                (release_id, name, size, content_type, sha1, sha256, sha512, uploader_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) {_RETURNING_ASSET}""",
        asset.release_id,
        asset.name,
        asset.size,
        asset.content_type,
        asset.sha1,
        asset.sha256,
        asset.sha512,
        asset.uploader_id,
    )
    assert row is not None
    return Asset(**dict(row))


async def delete_asset(conn: Conn, release_id: int, asset_id: int) -> Asset | None:
    """Deletes the asset of this release; None when there is no such asset."""
    row = await conn.fetchrow(
        f"DELETE FROM releases.assets WHERE id = $1 AND release_id = $2 {_RETURNING_ASSET}",
        asset_id,
        release_id,
    )
    return Asset(**dict(row)) if row else None


async def lock_blobs(conn: Conn) -> None:
    """Serialise, until the transaction ends, every step that adds or drops a file reference.

    One lock for all files: the digest is known only when a file is moved into place, and the
    locked steps take milliseconds (streaming happens before, outside the lock)."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('forge_releases.blobs', 0))")


async def unreferenced_blobs(conn: Conn, digests: list[str]) -> list[str]:
    """The digests in `digests` that no asset references (storage/sweep.py)."""
    rows = await conn.fetch(
        "SELECT d FROM unnest($1::text[]) AS d"
        " WHERE NOT EXISTS (SELECT 1 FROM releases.assets WHERE sha256 = d)",
        digests,
    )
    return [row["d"] for row in rows]


async def referenced_blobs(db: Queryable) -> list[str]:
    """Every digest an asset references (storage/migrate.py: what a complete copy must hold)."""
    rows = await db.fetch("SELECT DISTINCT sha256 FROM releases.assets")
    return [row["sha256"] for row in rows]


async def blob_referenced(conn: Conn, sha256: str) -> bool:
    referenced: bool = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM releases.assets WHERE sha256 = $1)", sha256
    )
    return referenced
