"""The account events (docs/events.md "Event types"): repository.*, org.created, org.member.*,
team.*, each written in the transaction of its change. Payloads are flat and name what they
concern by id and by name, as the other events do (proto/plugin/v1/EVENTS.md).

Each event's change goes to the audit log too (docs/audit.md "Kinds"), in the same transaction:
memberships (`membership.added` / `membership.removed` of an organization, a team or a
repository's collaborators), `repository.created` / `repository.settings` /
`repository.deleted`, `org.created` and `team.created`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import audit
from ..db import Conn
from ..outbox import Event, emit

SOURCE = "core"
Changes = Mapping[str, tuple[Any, Any]]


def _repo(p: Mapping[str, Any]) -> str:
    return f"{p['owner']}/{p['repo']}"


def _audit_entry(event_type: str, p: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """(kind, target, changes) of an event's change; None for an event the log does not keep."""
    if event_type == "org.created":
        return "org.created", f"org {p['org']}", {"visibility": (None, p["visibility"])}
    if event_type.startswith(("org.member.", "team.member.")):
        where = f"team {p['org']}/{p['team']}" if "team" in p else f"org {p['org']}"
        if event_type.endswith(".added"):
            changes = {"member": (None, p["login"])}
            if "role" in p:
                changes["role"] = (None, p["role"])
            return "membership.added", where, changes
        if event_type.endswith(".removed"):
            return "membership.removed", where, {"member": (p["login"], None)}
        return None  # publicized / concealed: the member's own choice, no access changes
    if event_type == "team.created":
        return (
            "team.created",
            f"team {p['org']}/{p['team']}",
            {"permission": (None, p["permission"])},
        )
    if event_type == "repository.created":
        return "repository.created", _repo(p), {"private": (None, p["private"])}
    if event_type == "repository.deleted":
        return "repository.deleted", _repo(p), {"repo": (_repo(p), None)}
    if event_type == "repository.collaborator.added":
        return "membership.added", _repo(p), {"collaborator": (None, p["login"])}
    if event_type == "repository.collaborator.removed":
        return "membership.removed", _repo(p), {"collaborator": (p["login"], None)}
    if event_type == "repository.updated":
        return "repository.settings", _repo(p), {}
    return None


async def record(
    conn: Conn,
    event_type: str,
    payload: Mapping[str, Any],
    *,
    actor_id: int | None,
    repo_id: int | None = None,
    org_id: int | None = None,
    audit_changes: Changes | None = None,
) -> None:
    """The event, and its audit entry; `audit_changes` adds the before/after values the payload
    does not carry (a repository's settings, a collaborator's permission)."""
    await emit(
        conn,
        Event(
            type=event_type,
            source=SOURCE,
            payload=dict(payload),
            repo_id=repo_id,
            org_id=org_id,
            actor_id=actor_id,
        ),
    )
    entry = _audit_entry(event_type, payload)
    if entry is not None:
        kind, target, changes = entry
        await audit.record_here(
            conn,
            kind=kind,
            target=target,
            changes={**changes, **(audit_changes or {})},
            actor_id=actor_id,
            # a deleted repository's entries stay readable by site admins (core migration 0007)
            repo_id=payload.get("repo_id") if event_type.startswith("repository.") else None,
        )
