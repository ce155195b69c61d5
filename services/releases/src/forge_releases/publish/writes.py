"""The publishing operations: each change and its event in one transaction, then the cache.

After a commit the local cache drops the repository at once (`invalidate_repo`), so the caller's
next request sees the change; the triggers of migration 0002 tell every other replica.

Files are content-addressed and may be shared by several assets: a file is deleted only when no
asset references its SHA-256 any more (`collect_garbage`, under the lock of queries.lock_blobs).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg
from aiohttp import web
from forge_common.audit import Origin
from forge_common.db import Conn, transaction
from forge_common.errors import RepoNotFound
from forge_common.keys import DB_POOL

from ..errors import AssetNameTaken, AssetNotFound, ReleaseNotFound, RepoArchived, TagTaken
from ..keys import RELEASE_CACHE, STORAGE
from ..models import Asset, Release, RepoRef
from ..read.queries import release_by_id
from ..safety import flags, withdraw
from ..signing_keys import check as tauri_check
from ..storage import Blob, BlobWriter
from . import audit_trail, events, queries
from .input import SafetyEdit, edit_release, safety_edit
from .queries import NewAsset, ReleaseFields, RepoFacts

log = logging.getLogger(__name__)


def _writable(facts: RepoFacts | None) -> RepoFacts:
    if facts is None:  # deleted since it was resolved
        raise RepoNotFound()
    if facts.archived:
        raise RepoArchived()
    return facts


async def _context(conn: Conn, ref: RepoRef, actor_id: int) -> events.Context:
    facts = _writable(await queries.repo_facts(conn, ref.repo_id))
    return events.Context(ref, facts.org_id, actor_id)


async def check_writable(app: web.Application, ref: RepoRef) -> None:
    """Refuse early what the write's own transaction would refuse (an archived repository), so
    an upload is not streamed in full for nothing."""
    _writable(await queries.repo_facts(app[DB_POOL], ref.repo_id))


async def _locked_release(conn: Conn, ref: RepoRef, release_id: int) -> Release:
    release = await queries.lock_release(conn, ref.repo_id, release_id)
    if release is None:
        raise ReleaseNotFound()
    return release


def _changed(app: web.Application, ref: RepoRef) -> None:
    app[RELEASE_CACHE].invalidate_repo(ref.repo_id)


async def create_release(
    app: web.Application, ref: RepoRef, actor_id: int, fields: ReleaseFields, *, origin: Origin
) -> Release:
    """201: a new release (or a bare tag turned into one); 409 when the tag has a release."""
    async with transaction(app[DB_POOL]) as conn:
        ctx = await _context(conn, ref, actor_id)
        release = await queries.insert_release(conn, ref.repo_id, fields, actor_id)
        if release is None:
            raise TagTaken(fields.tag)
        await events.release_created(conn, ctx, release)
        await audit_trail.created(conn, origin, ref, release)
    _changed(app, ref)
    return release


async def update_release(
    app: web.Application,
    ref: RepoRef,
    actor_id: int,
    release_id: int,
    data: Mapping[str, Any],
    *,
    origin: Origin,
) -> Release:
    """Only the given fields change; nothing is written (and no event sent) when none differs.
    The release-safety fields (withdrawn, required, critical) are applied after the others."""
    safety = safety_edit(data)
    async with transaction(app[DB_POOL]) as conn:
        ctx = await _context(conn, ref, actor_id)
        before = await _locked_release(conn, ref, release_id)
        edit = edit_release(data, before)
        if not edit.changed and not safety.given:
            return before
        if "tag" in edit.changed and await queries.tag_taken(
            conn, ref.repo_id, edit.fields.tag, other_than=release_id
        ):
            raise TagTaken(edit.fields.tag)
        if edit.changed:
            try:
                await queries.update_release(conn, release_id, edit.fields)
            except asyncpg.UniqueViolationError:  # a racing writer took the tag meanwhile
                raise TagTaken(edit.fields.tag) from None
        await _apply_safety(conn, release_id, before, safety, origin)
        after = await release_by_id(conn, ref.repo_id, release_id)
        assert after is not None
        await events.release_updated(conn, ctx, before, after, edit.changed)
        await audit_trail.updated(conn, origin, ref, before, after, edit.changed)
    _changed(app, ref)
    return after


async def _apply_safety(
    conn: Conn, release_id: int, before: Release, edit: SafetyEdit, origin: Origin
) -> None:
    """Withdraw or restore (a reason alone renames a withdrawn release's reason), then the
    required and critical marks; each writes its own audit entry (safety/)."""
    wants_withdrawn = edit.withdrawn
    if wants_withdrawn is None and edit.withdrawn_reason is not None and before.withdrawn:
        wants_withdrawn = True
    if wants_withdrawn:
        reason = edit.withdrawn_reason
        await withdraw.withdraw(
            conn,
            release_id,
            before.withdrawn_reason if reason is None else reason,
            actor=origin.actor,
            source=origin.source,
            request_id=origin.request_id,
        )
    elif wants_withdrawn is False:
        await withdraw.restore(
            conn, release_id, actor=origin.actor, source=origin.source, request_id=origin.request_id
        )
    for name in flags.FLAGS:
        value = getattr(edit, name)
        if value is not None:
            await flags.set_flag(conn, release_id, name, value, origin)


async def delete_release(
    app: web.Application, ref: RepoRef, actor_id: int, release_id: int, *, origin: Origin
) -> None:
    """The release and its assets; their files go unless another asset has the same bytes."""
    async with transaction(app[DB_POOL]) as conn:
        ctx = await _context(conn, ref, actor_id)
        release = await _locked_release(conn, ref, release_id)
        await queries.delete_release(conn, release.id)
        await events.release_deleted(conn, ctx, release)
        await audit_trail.deleted(conn, origin, ref, release)
    _changed(app, ref)
    await collect_garbage(app, {asset.sha256 for asset in release.assets})


async def attach_asset(
    app: web.Application,
    ref: RepoRef,
    actor_id: int,
    release_id: int,
    name: str,
    content_type: str,
    writer: BlobWriter,
    *,
    origin: Origin,
) -> tuple[Release, Asset, Blob]:
    """Move the received file into place and record it, in one locked transaction. On any
    failure the file is gone afterwards, unless another asset has the same bytes."""
    blob: Blob | None = None
    try:
        async with transaction(app[DB_POOL]) as conn:
            ctx = await _context(conn, ref, actor_id)
            release = await _locked_release(conn, ref, release_id)
            await queries.lock_blobs(conn)
            blob = await writer.commit()
            new = NewAsset(
                release.id,
                name,
                blob.size,
                content_type,
                blob.sha1,
                blob.sha256,
                blob.sha512,
                actor_id,
            )
            try:
                asset = await queries.insert_asset(conn, new)
            except asyncpg.UniqueViolationError:  # the same name, uploaded concurrently
                raise AssetNameTaken(name) from None
            await tauri_check.check_pair(app, conn, ref.repo_id, release.assets, asset)
            await events.asset_uploaded(conn, ctx, release, asset)
            await audit_trail.asset_changed(conn, origin, ref, release, asset, uploaded=True)
    except BaseException:
        if blob is None:
            writer.abort()
        else:
            await asyncio.shield(collect_garbage(app, {blob.sha256}))
        raise
    _changed(app, ref)
    return release, asset, blob


async def delete_asset(
    app: web.Application,
    ref: RepoRef,
    actor_id: int,
    release_id: int,
    asset_id: int,
    *,
    origin: Origin,
) -> None:
    async with transaction(app[DB_POOL]) as conn:
        ctx = await _context(conn, ref, actor_id)
        release = await _locked_release(conn, ref, release_id)
        asset = await queries.delete_asset(conn, release.id, asset_id)
        if asset is None:
            raise AssetNotFound()
        await events.asset_deleted(conn, ctx, release, asset)
        await audit_trail.asset_changed(conn, origin, ref, release, asset, uploaded=False)
    _changed(app, ref)
    await collect_garbage(app, {asset.sha256})


async def collect_garbage(app: web.Application, digests: Iterable[str]) -> None:
    """Delete the files no asset references. Best effort: a file left behind by a failure here
    is only unused disk space, never a broken download."""
    digests = sorted(digests)
    if not digests:
        return
    storage = app[STORAGE]
    try:
        async with transaction(app[DB_POOL]) as conn:
            await queries.lock_blobs(conn)
            for digest in digests:
                if not await queries.blob_referenced(conn, digest):
                    await storage.delete(digest)
    except Exception:
        log.exception("could not delete unreferenced asset files %s", digests)
