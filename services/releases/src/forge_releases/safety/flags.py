"""Mark a release as a required intermediate step (`required`) or as critical (`critical`: the
installs below it must update), with the audit entry in the same transaction."""

from __future__ import annotations

from forge_common import audit
from forge_common.db import Conn

from ..errors import ReleaseNotFound
from . import queries

FLAGS = ("required", "critical")


async def set_flag(
    conn: Conn, release_id: int, name: str, value: bool, origin: audit.Origin
) -> int:
    """Set `name` (required or critical) to `value`; nothing is written when it is already so.
    Returns the repository id, for the caller's cache. Inside the caller's transaction."""
    if name not in FLAGS:
        raise ValueError(name)
    row = await queries.lock(conn, release_id)
    if row is None:
        raise ReleaseNotFound()
    before = bool(getattr(row, name))
    if before == value:
        return row.repo_id
    await queries.set_flag(conn, release_id, name, value)
    await audit.record_as(
        conn,
        origin,
        kind=f"release.{name}",
        target=row.target,
        changes={name: (before, value)},
        repo_id=row.repo_id,
    )
    return row.repo_id
