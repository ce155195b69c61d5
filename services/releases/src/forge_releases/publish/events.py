"""The `release.*` events (docs/events.md, payloads as agreed in proto/plugin/v1/EVENTS.md), written
to the outbox in the transaction of the change they describe.

Every payload: repo_id, owner, repo, full_name, release_id, tag, title, draft, prerelease and
actor_id; `release.updated` adds `changed` (names among title, note, tag, target, draft,
prerelease); asset events add asset_id and asset_name, and `release.asset.uploaded` adds size.
The envelope carries repo_id, org_id (organization-owned repositories) and actor_id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forge_common.outbox import Event, emit

from ..models import Asset, Release, RepoRef

if TYPE_CHECKING:
    import asyncpg

SOURCE = "releases"


@dataclass(frozen=True, slots=True)
class Context:
    """Who changed which repository: what every event of one request shares."""

    ref: RepoRef
    org_id: int | None
    actor_id: int


def release_payload(ctx: Context, release: Release) -> dict[str, Any]:
    ref = ctx.ref
    return {
        "repo_id": ref.repo_id,
        "owner": ref.owner,
        "repo": ref.name,
        "full_name": f"{ref.owner}/{ref.name}",
        "release_id": release.id,
        "tag": release.tag,
        "title": release.title,
        "draft": release.draft,
        "prerelease": release.prerelease,
        "actor_id": ctx.actor_id,
    }


async def _emit(
    conn: asyncpg.Connection[Any],
    ctx: Context,
    event_type: str,
    release: Release,
    extra: Mapping[str, Any] | None = None,
) -> None:
    await emit(
        conn,
        Event(
            type=event_type,
            source=SOURCE,
            payload={**release_payload(ctx, release), **(extra or {})},
            repo_id=ctx.ref.repo_id,
            org_id=ctx.org_id,
            actor_id=ctx.actor_id,
        ),
    )


async def release_created(conn: asyncpg.Connection[Any], ctx: Context, release: Release) -> None:
    """`release.created`, and `release.published` too when it was created visible."""
    await _emit(conn, ctx, "release.created", release)
    if not release.draft:
        await _emit(conn, ctx, "release.published", release)


async def release_updated(
    conn: asyncpg.Connection[Any],
    ctx: Context,
    before: Release,
    after: Release,
    changed: Sequence[str],
) -> None:
    """`release.updated` with the changed fields, and `release.published` for a draft made
    public. Nothing when nothing changed."""
    if not changed:
        return
    await _emit(conn, ctx, "release.updated", after, {"changed": list(changed)})
    if before.draft and not after.draft:
        await _emit(conn, ctx, "release.published", after)


async def release_deleted(conn: asyncpg.Connection[Any], ctx: Context, release: Release) -> None:
    await _emit(conn, ctx, "release.deleted", release)


async def asset_uploaded(
    conn: asyncpg.Connection[Any], ctx: Context, release: Release, asset: Asset
) -> None:
    extra = {"asset_id": asset.id, "asset_name": asset.name, "size": asset.size}
    await _emit(conn, ctx, "release.asset.uploaded", release, extra)


async def asset_deleted(
    conn: asyncpg.Connection[Any], ctx: Context, release: Release, asset: Asset
) -> None:
    extra = {"asset_id": asset.id, "asset_name": asset.name}
    await _emit(conn, ctx, "release.asset.deleted", release, extra)
