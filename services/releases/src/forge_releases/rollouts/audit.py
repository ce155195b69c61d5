"""Who decided, for the plan's history, the audit log and the plugins' event: a publisher
(through the API or the console) or the evaluator (the system)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from forge_common import audit
from forge_common.audit.origin import origin_of
from forge_common.auth import Viewer
from forge_common.db import Conn


@dataclass(frozen=True, slots=True)
class Actor:
    id: int | None  # None: the evaluator
    login: str | None
    source: str  # api | console | system (forge_common.audit.SOURCES)
    request_id: str | None = None

    @property
    def name(self) -> str:
        return self.login or "the evaluator"


SYSTEM = Actor(None, None, "system")


def request_actor(request: web.Request, viewer: Viewer) -> Actor:
    """The publisher acting through `request`: from the console (a session), the `forge` CLI
    (it names itself) or the API (forge_common.audit.origin)."""
    origin = origin_of(request)
    return Actor(viewer.id, viewer.login, origin.source, origin.request_id)


async def record_decision(
    conn: Conn, actor: Actor, *, target: str, repo_id: int, kind: str,
    changes: dict[str, tuple[Any, Any]],
) -> None:  # fmt: skip
    """One audit entry (`rollout_plan.<decision>`) in the transaction that takes the decision."""
    await audit.record(
        conn, actor=actor.login, kind=f"rollout_plan.{kind}", target=target, changes=changes,
        source=actor.source, request_id=actor.request_id, repo_id=repo_id,
    )  # fmt: skip
