"""The one seam between rollout plans and the audit log (docs/rollouts.md "Audit"): every
decision of a plan is recorded here, in the transaction that takes it."""

from __future__ import annotations

from typing import Any

from forge_common.db import Conn


async def record_decision(
    conn: Conn, *, actor_id: int | None, release_id: int, repo_id: int, kind: str,
    changes: dict[str, Any], request_id: str | None,
) -> None:  # fmt: skip
    """Until the audit log exists on this branch the plan's own history
    (`releases.rollout_events`, written beside this call) is the record."""
    del conn, actor_id, release_id, repo_id, kind, changes, request_id
