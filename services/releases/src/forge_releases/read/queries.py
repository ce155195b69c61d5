"""Read-side queries: plain async functions with inline SQL returning frozen models.

Every list is in docs/http.md order (created_at desc, then id desc); bare tags are never releases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forge_common.db import Queryable

from ..models import Asset, Release

CANDIDATE_LIMIT = 50  # docs/http.md Limits: releases examined by the update check

_RELEASE_COLUMNS = (
    "id, repo_id, tag, target, title, note, draft, prerelease, created_at, rollout, "
    "withdrawn, withdrawn_reason, required, critical"
)
# A withdrawn release is not published any more (docs/release-safety.md): wherever a draft is left
# out, so is it.
_PUBLISHED = "NOT draft AND NOT withdrawn"
_ASSET_COLUMNS = (
    "id, release_id, name, size, content_type, sha256, uuid::text AS uuid, download_count, "
    "created_at, sha1, sha512"
)
_ORDER = "ORDER BY created_at DESC, id DESC"


async def _with_assets(db: Queryable, rows: Sequence[Any]) -> list[Release]:
    """Releases from `rows`, each with its assets in attachment order (one query for all)."""
    if not rows:
        return []
    asset_rows = await db.fetch(
        f"SELECT {_ASSET_COLUMNS} FROM releases.assets "
        "WHERE release_id = ANY($1::bigint[]) ORDER BY id",
        [row["id"] for row in rows],
    )
    by_release: dict[int, list[Asset]] = {}
    for row in asset_rows:
        by_release.setdefault(row["release_id"], []).append(Asset(**dict(row)))
    return [Release(**dict(row), assets=tuple(by_release.get(row["id"], ()))) for row in rows]


def _filters(prereleases: bool, drafts: bool) -> str:
    conditions = ["repo_id = $1", "NOT tag_only"]
    if not prereleases:
        conditions.append("NOT prerelease")
    if not drafts:
        conditions.append(_PUBLISHED)
    return " AND ".join(conditions)


async def list_releases(
    db: Queryable, repo_id: int, *, prereleases: bool, drafts: bool, limit: int, offset: int
) -> list[Release]:
    rows = await db.fetch(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        f"WHERE {_filters(prereleases, drafts)} {_ORDER} LIMIT $2 OFFSET $3",
        repo_id,
        limit,
        offset,
    )
    return await _with_assets(db, rows)


async def count_releases(db: Queryable, repo_id: int, *, prereleases: bool, drafts: bool) -> int:
    count: int = await db.fetchval(
        f"SELECT count(*) FROM releases.releases WHERE {_filters(prereleases, drafts)}", repo_id
    )
    return count


async def release_by_id(db: Queryable, repo_id: int, release_id: int) -> Release | None:
    row = await db.fetchrow(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        "WHERE id = $1 AND repo_id = $2 AND NOT tag_only",
        release_id,
        repo_id,
    )
    return (await _with_assets(db, [row]))[0] if row else None


async def release_by_tag(db: Queryable, repo_id: int, tag: str) -> Release | None:
    row = await db.fetchrow(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        "WHERE repo_id = $1 AND tag = $2 AND NOT tag_only",
        repo_id,
        tag,
    )
    return (await _with_assets(db, [row]))[0] if row else None


async def latest_release(db: Queryable, repo_id: int, *, prereleases: bool) -> Release | None:
    row = await db.fetchrow(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        f"WHERE {_filters(prereleases, drafts=False)} {_ORDER} LIMIT 1",
        repo_id,
    )
    return (await _with_assets(db, [row]))[0] if row else None


async def download_counts(db: Queryable, release_id: int) -> dict[int, int]:
    """The stored download count of each file of a release, by asset id."""
    rows = await db.fetch(
        "SELECT id, download_count FROM releases.assets WHERE release_id = $1", release_id
    )
    return {row["id"]: row["download_count"] for row in rows}


async def candidates(db: Queryable, repo_id: int) -> tuple[list[Release], list[Release]]:
    """Update-check candidates (docs/releases.md update rule 3): the first 50 published releases,
    and the first 50 that are also not prereleases (channel `stable`), fetched together."""
    rows = await db.fetch(
        f"""SELECT {_RELEASE_COLUMNS} FROM (
                (SELECT {_RELEASE_COLUMNS} FROM releases.releases
                  WHERE repo_id = $1 AND {_PUBLISHED} AND NOT tag_only {_ORDER} LIMIT $2)
                UNION
                (SELECT {_RELEASE_COLUMNS} FROM releases.releases
                  WHERE repo_id = $1 AND {_PUBLISHED} AND NOT tag_only AND NOT prerelease
                  {_ORDER} LIMIT $2)
            ) AS c {_ORDER}""",
        repo_id,
        CANDIDATE_LIMIT,
    )
    releases = await _with_assets(db, rows)
    # Any row of the union outside the first 50 of either list sorts after those 50.
    everything = releases[:CANDIDATE_LIMIT]
    stable = [r for r in releases if not r.prerelease][:CANDIDATE_LIMIT]
    return stable, everything


async def withdrawn_tags(db: Queryable, repo_id: int) -> list[str]:
    """The tags of the repository's withdrawn releases: installs running one of them may be rolled
    back (safety/decide.py)."""
    rows = await db.fetch(
        "SELECT tag FROM releases.releases WHERE repo_id = $1 AND withdrawn AND NOT tag_only",
        repo_id,
    )
    return [row["tag"] for row in rows]


async def release_by_download_tag(db: Queryable, repo_id: int, tag: str) -> Release | None:
    """The release a download URL names: the exact tag, else the tag compared case-insensitively
    (Squirrel.Windows retries a failed download with the whole URL lower-cased)."""
    found = await release_by_tag(db, repo_id, tag)
    if found is not None:
        return found
    row = await db.fetchrow(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        f"WHERE repo_id = $1 AND lower(tag) = lower($2) AND NOT tag_only {_ORDER} LIMIT 1",
        repo_id,
        tag,
    )
    return (await _with_assets(db, [row]))[0] if row else None


async def release_by_asset(db: Queryable, repo_id: int, asset_id: int) -> Release | None:
    """The release holding asset `asset_id` (GitHub's API names an asset by its id alone)."""
    row = await db.fetchrow(
        f"SELECT {_RELEASE_COLUMNS} FROM releases.releases "
        "WHERE repo_id = $1 AND NOT tag_only AND id = "
        "(SELECT release_id FROM releases.assets WHERE id = $2)",
        repo_id,
        asset_id,
    )
    return (await _with_assets(db, [row]))[0] if row else None
