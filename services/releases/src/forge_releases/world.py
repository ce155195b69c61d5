"""The releases part of the world file: `repos[i].releases[j]` with their assets."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from forge_common import checks
from forge_common.config import Settings
from forge_common.service import WorldIds

from .publish.names import asset_name_problem, tag_problem
from .storage import Storage, deterministic_bytes

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
    repos = world.get("repos")
    if not isinstance(repos, list):
        return
    for i, repo in enumerate(repos):
        if not isinstance(repo, dict):
            continue
        path = f"repos[{i}]"
        tags = []
        for j, release in enumerate(checks.entries(repo, "releases", path, errors)):
            rpath = f"{path}.releases[{j}]"
            tag = checks.text(release, "tag", rpath, errors, required=True)
            if tag and (problem := tag_problem(tag)):
                errors.append(f"{rpath}.tag: {problem}")
            tags.append((f"{rpath}.tag", tag))
            for key in ("title", "note", "target"):
                checks.text(release, key, rpath, errors)
            for key in ("draft", "prerelease", "tag_only"):
                checks.flag(release, key, rpath, errors)
            created = checks.text(release, "created_at", rpath, errors)
            if created and _parse_time(created) is None:
                errors.append(f"{rpath}.created_at: not an RFC 3339 time with a zone")
            names = []
            for k, asset in enumerate(checks.entries(release, "assets", rpath, errors)):
                apath = f"{rpath}.assets[{k}]"
                name = checks.text(asset, "name", apath, errors, required=True)
                if name and (problem := asset_name_problem(name)):
                    errors.append(f"{apath}.name: {problem}")
                names.append((f"{apath}.name", name))
                has_content, has_size = "content" in asset, "size" in asset
                if has_content == has_size:
                    errors.append(f"{apath}: give exactly one of content or size")
                elif has_content:
                    checks.text(asset, "content", apath, errors)
                else:
                    checks.number(asset, "size", apath, errors, low=0, high=MAX_WORLD_ASSET_SIZE)
            _unique_exact(names, errors, "asset name")
        _unique_exact(tags, errors, "tag")


def _unique_exact(items: list[tuple[str, str]], errors: list[str], what: str) -> None:
    seen: dict[str, str] = {}
    for path, value in items:
        if value in seen:
            errors.append(f"{path}: duplicate {what} {value!r} (also at {seen[value]})")
        seen.setdefault(value, path)


async def load(
    conn: asyncpg.Connection[Any], world: Mapping[str, Any], ids: WorldIds, settings: Settings
) -> None:
    storage = Storage(settings.storage_path)
    default_time = _FIRST_DEFAULT_TIME
    for repo in world.get("repos", []):
        repo_id = ids.repos[(repo["owner"].lower(), repo["name"].lower())]
        for release in repo.get("releases", []):
            created = (
                _parse_time(release["created_at"]) if release.get("created_at") else default_time
            )
            default_time += timedelta(minutes=1)
            release_id = await conn.fetchval(
                """INSERT INTO releases.releases
                       (repo_id, tag, target, title, note, draft, prerelease, tag_only,
                        created_at, updated_at)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id""",
                repo_id,
                release["tag"],
                release.get("target", ""),
                release.get("title", ""),
                release.get("note", ""),
                release.get("draft", False),
                release.get("prerelease", False),
                release.get("tag_only", False),
                created,
            )
            for asset in release.get("assets", []):
                writer = storage.writer()
                try:
                    if "content" in asset:
                        writer.write(asset["content"].encode())
                    else:
                        for chunk in deterministic_bytes(asset["name"], asset["size"]):
                            writer.write(chunk)
                    blob = writer.commit()
                except BaseException:
                    writer.abort()
                    raise
                await conn.execute(
                    """INSERT INTO releases.assets
                           (release_id, name, size, sha1, sha256, sha512, created_at)
                       VALUES ($1, $2, $3, $4, $5, $6, $7)""",
                    release_id,
                    asset["name"],
                    blob.size,
                    blob.sha1,
                    blob.sha256,
                    blob.sha512,
                    created,
                )
