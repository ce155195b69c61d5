"""Withdraw a release, or put it back, with its audit entry in the same transaction.

The UPDATE fires releases_notify_change (migration 0002), which every replica's release cache
hears at commit: a withdrawal reaches every feed at the speed of a publish (the same invalidation),
and nginx's micro-cache forgets within its second. The caller's own replica may drop its cache at
once after the commit (RELEASE_CACHE.invalidate_repo), as publish/writes.py does.
"""

from __future__ import annotations

from forge_common import audit
from forge_common.db import Conn

from ..errors import DraftNotWithdrawable, InvalidField, ReleaseNotFound
from . import queries

MAX_REASON = 1000
KIND_WITHDRAWN = "release.withdrawn"
KIND_RESTORED = "release.restored"


def _reason(raw: str) -> str:
    reason = raw.strip()
    if len(reason) > MAX_REASON:
        raise InvalidField("withdrawn_reason", f"must be at most {MAX_REASON} characters")
    return reason


async def _locked(conn: Conn, release_id: int) -> queries.SafetyRow:
    row = await queries.lock(conn, release_id)
    if row is None:
        raise ReleaseNotFound()
    return row


async def withdraw(
    conn: Conn,
    release_id: int,
    reason: str,
    *,
    actor: str | None,
    source: str,
    request_id: str | None,
) -> int:
    """Withdraw a published release (or change a withdrawn one's reason); returns its repository
    id, for the caller's cache. Nothing is written when nothing changes. Must run inside the
    caller's transaction."""
    reason = _reason(reason)
    row = await _locked(conn, release_id)
    if row.draft:
        raise DraftNotWithdrawable()
    if row.withdrawn and row.withdrawn_reason == reason:
        return row.repo_id
    await queries.set_withdrawn(conn, release_id, True, reason)
    changes = audit.changes_between(
        {"withdrawn": row.withdrawn, "withdrawn_reason": row.withdrawn_reason},
        {"withdrawn": True, "withdrawn_reason": reason},
    )
    await audit.record(
        conn,
        actor=actor,
        kind=KIND_WITHDRAWN,
        target=row.target,
        changes=changes,
        source=source,
        request_id=request_id,
        repo_id=row.repo_id,
    )
    return row.repo_id


async def restore(
    conn: Conn, release_id: int, *, actor: str | None, source: str, request_id: str | None
) -> int:
    """Undo a withdrawal: the release is offered again. Returns its repository id."""
    row = await _locked(conn, release_id)
    if not row.withdrawn:
        return row.repo_id
    await queries.set_withdrawn(conn, release_id, False, "")
    await audit.record(
        conn,
        actor=actor,
        kind=KIND_RESTORED,
        target=row.target,
        changes={"withdrawn": (True, False), "withdrawn_reason": (row.withdrawn_reason, "")},
        source=source,
        request_id=request_id,
        repo_id=row.repo_id,
    )
    return row.repo_id
