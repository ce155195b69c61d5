"""The audit entries of release changes (docs/audit.md "Kinds"), written by writes.py in the
transaction of each change: `release.created`, `release.edited` (title, notes, tag, target,
prerelease), `release.published` / `release.unpublished` (draft turned off / on),
`release.rollout`, `release.deleted`, `release.asset.uploaded` and `release.asset.deleted`.
Withdrawal, required steps and critical releases record themselves (safety/)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forge_common import audit
from forge_common.db import Conn

from ..models import Asset, Release, RepoRef

# Release notes may be a megabyte: an entry keeps the start of a long text, enough to recognise it.
TEXT_LIMIT = 500
_EDITED = ("tag", "target", "title", "note", "prerelease")


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TEXT_LIMIT:
        return value[:TEXT_LIMIT] + "…"
    return value


def target_of(ref: RepoRef, tag: str) -> str:
    return f"{ref.owner}/{ref.name}@{tag}"


async def _record(
    conn: Conn,
    origin: audit.Origin,
    ref: RepoRef,
    kind: str,
    tag: str,
    changes: dict[str, tuple[Any, Any]],
) -> None:
    shown = {name: (_shown(old), _shown(new)) for name, (old, new) in changes.items()}
    await audit.record_as(
        conn, origin, kind=kind, target=target_of(ref, tag), changes=shown, repo_id=ref.repo_id
    )


async def created(conn: Conn, origin: audit.Origin, ref: RepoRef, release: Release) -> None:
    fields = {
        "tag": release.tag,
        "title": release.title,
        "draft": release.draft,
        "prerelease": release.prerelease,
        "rollout": release.rollout,
    }
    changes = {name: (None, value) for name, value in fields.items()}
    await _record(conn, origin, ref, "release.created", release.tag, changes)
    if not release.draft:
        await _record(conn, origin, ref, "release.published", release.tag, {})


async def updated(
    conn: Conn,
    origin: audit.Origin,
    ref: RepoRef,
    before: Release,
    after: Release,
    changed: Sequence[str],
) -> None:
    """One entry per kind of change among `changed` (model attribute names)."""
    edited = {n: (getattr(before, n), getattr(after, n)) for n in _EDITED if n in changed}
    if edited:
        await _record(conn, origin, ref, "release.edited", after.tag, edited)
    if "draft" in changed:
        kind = "release.unpublished" if after.draft else "release.published"
        await _record(conn, origin, ref, kind, after.tag, {"draft": (before.draft, after.draft)})
    if "rollout" in changed:
        rollout = {"rollout": (before.rollout, after.rollout)}
        await _record(conn, origin, ref, "release.rollout", after.tag, rollout)


async def deleted(conn: Conn, origin: audit.Origin, ref: RepoRef, release: Release) -> None:
    await _record(conn, origin, ref, "release.deleted", release.tag, {"tag": (release.tag, None)})


async def asset_changed(
    conn: Conn,
    origin: audit.Origin,
    ref: RepoRef,
    release: Release,
    asset: Asset,
    *,
    uploaded: bool,
) -> None:
    facts: dict[str, Any] = {"name": asset.name, "size": asset.size, "sha256": asset.sha256}
    changes: dict[str, tuple[Any, Any]]
    if uploaded:
        changes = {name: (None, value) for name, value in facts.items()}
        kind = "release.asset.uploaded"
    else:
        changes = {name: (value, None) for name, value in facts.items()}
        kind = "release.asset.deleted"
    await _record(conn, origin, ref, kind, release.tag, changes)
