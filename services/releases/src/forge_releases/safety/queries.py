"""The SQL of release safety: the columns of releases migration 0011."""

from __future__ import annotations

from dataclasses import dataclass

from forge_common.db import Conn


@dataclass(frozen=True, slots=True)
class SafetyRow:
    """A release's safety state, with what names it in the audit log."""

    release_id: int
    repo_id: int
    full_name: str
    tag: str
    draft: bool
    withdrawn: bool
    withdrawn_reason: str
    required: bool
    critical: bool

    @property
    def target(self) -> str:
        return f"{self.full_name}@{self.tag}"


async def lock(conn: Conn, release_id: int) -> SafetyRow | None:
    """The release's row, locked until the transaction ends (two withdrawals serialize)."""
    row = await conn.fetchrow(
        """SELECT r.id AS release_id, r.repo_id, o.name || '/' || p.name AS full_name, r.tag,
                  r.draft, r.withdrawn, r.withdrawn_reason, r.required, r.critical
             FROM releases.releases r
             JOIN core.repositories p ON p.id = r.repo_id
             JOIN core.accounts o ON o.id = p.owner_id
            WHERE r.id = $1 AND NOT r.tag_only
              FOR UPDATE OF r""",
        release_id,
    )
    return None if row is None else SafetyRow(**dict(row))


async def set_withdrawn(conn: Conn, release_id: int, withdrawn: bool, reason: str) -> None:
    """The releases_notify_change trigger (migration 0002) tells every replica at commit."""
    await conn.execute(
        """UPDATE releases.releases
              SET withdrawn = $2, withdrawn_reason = $3,
                  withdrawn_at = CASE WHEN $2 THEN now() END, updated_at = now()
            WHERE id = $1""",
        release_id,
        withdrawn,
        reason,
    )


async def set_flag(conn: Conn, release_id: int, name: str, value: bool) -> None:
    """`required` or `critical`."""
    if name not in ("required", "critical"):
        raise ValueError(name)
    await conn.execute(
        f"UPDATE releases.releases SET {name} = $2, updated_at = now() WHERE id = $1",
        release_id,
        value,
    )
