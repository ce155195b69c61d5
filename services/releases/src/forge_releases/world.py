"""The releases part of the world file: `repos[i].releases[j]` with their assets."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from forge_common import checks
from forge_common.config import Settings
from forge_common.service import WorldIds

from .publish.names import asset_name_problem, tag_problem
from .storage import Blob, Storage, deterministic_bytes, open_storage

MAX_WORLD_ASSET_SIZE = 1 << 30
# Releases without created_at get consecutive times in file order, from this moment.
_FIRST_DEFAULT_TIME = datetime(2020, 1, 1, tzinfo=UTC)


def _parse_time(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def validate(world: Mapping[str, Any], errors: list[str]) -> None:
    # Core reports a malformed repos section or entry; only well-formed repositories are read.
    for path, repo in checks.objects(world, "repos"):
        tags = []
        for j, release in enumerate(checks.entries(repo, "releases", path, errors)):
            rpath = f"{path}.releases[{j}]"
            tags.append((f"{rpath}.tag", _validate_release(release, rpath, errors)))
        _unique_exact(tags, errors, "tag")


def _validate_release(release: Mapping[str, Any], path: str, errors: list[str]) -> str:
    """The release's tag, for the check across the repository's releases."""
    tag = checks.text(release, "tag", path, errors, required=True)
    if tag and (problem := tag_problem(tag)):
        errors.append(f"{path}.tag: {problem}")
    checks.display_name(release, "title", path, errors, max_length=255)
    for key in ("note", "target", "withdrawn_reason"):
        checks.text(release, key, path, errors)
    for key in ("draft", "prerelease", "tag_only", "withdrawn", "required", "critical"):
        checks.flag(release, key, path, errors)
    rollout = release.get("rollout")
    if rollout is not None and (type(rollout) is not int or not 1 <= rollout <= 100):
        errors.append(f"{path}.rollout: must be an integer from 1 to 100")
    created = checks.text(release, "created_at", path, errors)
    if created and _parse_time(created) is None:
        errors.append(f"{path}.created_at: not an RFC 3339 time with a zone")
    names = []
    for k, asset in enumerate(checks.entries(release, "assets", path, errors)):
        apath = f"{path}.assets[{k}]"
        names.append((f"{apath}.name", _validate_asset(asset, apath, errors)))
    _unique_exact(names, errors, "asset name")
    return tag


def _validate_asset(asset: Mapping[str, Any], path: str, errors: list[str]) -> str:
    """The asset's name, for the check across the release's assets."""
    name = checks.text(asset, "name", path, errors, required=True)
    if name and (problem := asset_name_problem(name)):
        errors.append(f"{path}.name: {problem}")
    has_content, has_size = "content" in asset, "size" in asset
    if has_content == has_size:
        errors.append(f"{path}: give exactly one of content or size")
    elif has_content:
        checks.text(asset, "content", path, errors)
    else:
        checks.number(asset, "size", path, errors, low=0, high=MAX_WORLD_ASSET_SIZE)
    return name


def _unique_exact(items: list[tuple[str, str]], errors: list[str], what: str) -> None:
    seen: dict[str, str] = {}
    for path, value in items:
        if value in seen:
            errors.append(f"{path}: duplicate {what} {value!r} (also at {seen[value]})")
        seen.setdefault(value, path)


async def load(
    conn: asyncpg.Connection[Any], world: Mapping[str, Any], ids: WorldIds, settings: Settings
) -> None:
    storage = open_storage(settings)
    try:
        for position, (repo_id, release) in enumerate(_releases_in_file_order(world, ids)):
            created = _created_at(release, position)
            release_id = await _insert_release(conn, repo_id, release, created)
            for asset in release.get("assets", []):
                blob = await _store_asset(storage, asset)
                await _insert_asset(conn, release_id, asset["name"], blob, created)
    finally:
        await storage.close()


def _releases_in_file_order(
    world: Mapping[str, Any], ids: WorldIds
) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(repository id, release) of every release of every repository, in file order."""
    for repo in world.get("repos", []):
        repo_id = ids.repos[(repo["owner"].lower(), repo["name"].lower())]
        for release in repo.get("releases", []):
            yield repo_id, release


def _created_at(release: Mapping[str, Any], position: int) -> datetime | None:
    """The release's own time, else one minute per release before it in the file after
    _FIRST_DEFAULT_TIME (a release with its own time still takes its minute)."""
    if release.get("created_at"):
        return _parse_time(release["created_at"])
    return _FIRST_DEFAULT_TIME + timedelta(minutes=position)


async def _store_asset(storage: Storage, asset: Mapping[str, Any]) -> Blob:
    """The asset's bytes in storage: its content, or `size` bytes that depend on its name."""
    if "content" in asset:
        chunks = [asset["content"].encode()]
    else:
        chunks = deterministic_bytes(asset["name"], asset["size"])
    writer = await storage.writer()
    try:
        for chunk in chunks:
            await writer.write(chunk)
        return await writer.commit()
    except BaseException:
        writer.abort()
        raise


async def _insert_release(
    conn: asyncpg.Connection[Any],
    repo_id: int,
    release: Mapping[str, Any],
    created: datetime | None,
) -> int:
    release_id: int = await conn.fetchval(
        """INSERT INTO releases.releases
               (repo_id, tag, target, title, note, draft, prerelease, tag_only,
                created_at, updated_at, rollout, withdrawn, withdrawn_reason, required, critical)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12, $13, $14)
           RETURNING id""",
        repo_id,
        release["tag"],
        release.get("target", ""),
        release.get("title", ""),
        release.get("note", ""),
        release.get("draft", False),
        release.get("prerelease", False),
        release.get("tag_only", False),
        created,
        release.get("rollout"),
        release.get("withdrawn", False),
        release.get("withdrawn_reason", ""),
        release.get("required", False),
        release.get("critical", False),
    )
    return release_id


async def _insert_asset(
    conn: asyncpg.Connection[Any],
    release_id: int,
    name: str,
    blob: Blob,
    created: datetime | None,
) -> None:
    await conn.execute(
        """INSERT INTO releases.assets
               (release_id, name, size, sha1, sha256, sha512, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)""",
        release_id,
        name,
        blob.size,
        blob.sha1,
        blob.sha256,
        blob.sha512,
        created,
    )
