"""The one seam between rollout plans and release withdrawal (docs/rollouts.md "On failure"):
the release-safety withdrawal (forge_releases.safety.withdraw), by the system."""

from __future__ import annotations

from forge_common.db import Conn

from ..safety.withdraw import withdraw
from .queries import PlanRow


async def withdraw_release(conn: Conn, plan: PlanRow, reason: str) -> bool:
    """Withdraw the release (installs that took it are offered the one before, where their
    client can go back); False when it cannot be (a draft)."""
    if plan.draft:
        return False
    await withdraw(conn, plan.release_id, reason[:1000], actor=None, source="system",
                   request_id=None)  # fmt: skip
    return True
