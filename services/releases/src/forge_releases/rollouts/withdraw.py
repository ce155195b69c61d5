"""The one seam between rollout plans and release withdrawal (docs/rollouts.md "On failure")."""

from __future__ import annotations

from forge_common.db import Conn

from .queries import PlanRow


async def withdraw_release(conn: Conn, plan: PlanRow, reason: str) -> bool:
    """Withdraw the release with roll-back; False when this build cannot (the plan then only
    halts, and says so)."""
    del conn, plan, reason
    return False
