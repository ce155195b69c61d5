"""Which rollout plans run, learnt from the events the gateway already receives: a
`release.rollout.changed` event carries the plan's state, its release and the release it
replaces; `release.deleted` ends a release's rollout for good. Stored at ingest, beside the
events, so the collector never asks the releases service (docs/rollouts.md "From a plugin")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from forge_common.db import Queryable

from ..events.models import IncomingEvent
from . import queries
from .queries import RolloutChange

ROLLOUT_CHANGED = "release.rollout.changed"
RELEASE_DELETED = "release.deleted"
TRACKED = frozenset({ROLLOUT_CHANGED, RELEASE_DELETED})


def _int(payload: Mapping[str, Any], key: str) -> int | None:
    value = payload.get(key)
    # JSON numbers arrive as int (orjson); a whole float from another producer is accepted too
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        return None
    return int(value)


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def change_of(event: IncomingEvent) -> RolloutChange | None:
    """The rollout change an event tells, or None (another type, or a payload without it)."""
    if event.type not in TRACKED:
        return None
    payload = event.payload
    release_id = _int(payload, "release_id")
    repo_id = _int(payload, "repo_id") or event.repo_id
    tag = _text(payload, "tag")
    if release_id is None or repo_id is None or tag is None:
        return None
    state = "deleted" if event.type == RELEASE_DELETED else _text(payload, "state")
    if state is None:
        return None
    return RolloutChange(
        release_id=release_id,
        repo_id=repo_id,
        tag=tag,
        replaces_release_id=_int(payload, "replaces_release_id"),
        replaces_tag=_text(payload, "replaces_tag"),
        state=state,
        decided_at=event.occurred_at,
    )


def _newer(change: RolloutChange, than: RolloutChange) -> bool:
    if than.state == "deleted":
        return False
    return change.state == "deleted" or change.decided_at >= than.decided_at


async def track(db: Queryable, events: Sequence[IncomingEvent]) -> int:
    """Store what `events` tell of rollouts (the newest change per release); how many releases.
    A batch without such events costs nothing."""
    newest: dict[int, RolloutChange] = {}
    for event in events:
        change = change_of(event)
        if change is None:
            continue
        known = newest.get(change.release_id)
        if known is None or _newer(change, known):
            newest[change.release_id] = change
    if newest:
        await queries.track(db, list(newest.values()))
    return len(newest)
