"""The audit log (docs/audit.md): who changed what, when, from where, before and after.

`record()` runs inside the caller's transaction, so a change and its entry are committed together
or not at all, and puts the entry in the outbox as an `audit.recorded` event too: plugins receive
it through the same lossless relay as every other event (docs/events.md).

Nothing secret is ever recorded: `record()` refuses a change of a field whose value is a secret
(SECRET_FIELDS); callers record a key's or token's name, fingerprint or scopes instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..db import Conn
from ..outbox import Event, emit
from . import queries
from .origin import SYSTEM, Origin, current_origin, origin_of, request_var
from .queries import Entry, Filters

__all__ = [
    "SECRET_FIELDS",
    "SOURCES",
    "SYSTEM",
    "Entry",
    "Filters",
    "Origin",
    "changes_between",
    "current_origin",
    "origin_of",
    "plugin_source",
    "record",
    "record_as",
    "record_here",
    "request_var",
]

# Where a change came from: the web console, the HTTP API, the `forge` CLI (and the world file
# it loads), or the system itself (a rollout plan deciding, retention).
SOURCES = frozenset({"console", "api", "cli", "system"})
# ...or a plugin, named as in PLUGINS_FILE: `plugin:NAME` (a plugin's release health figures,
# stored by the gateway; docs/rollouts.md "From a plugin").
_PLUGIN_SOURCE = re.compile(r"plugin:[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def plugin_source(name: str) -> str:
    """The audit source of the plugin configured as `name`."""
    source = f"plugin:{name}"
    if _PLUGIN_SOURCE.fullmatch(source) is None:
        raise ValueError(f"not a plugin name: {name!r}")
    return source


# Field names whose values are credentials: never recorded, whatever the caller passes.
SECRET_FIELDS = frozenset(
    {
        "password",
        "password_hash",
        "token",
        "token_sha256",
        "secret",
        "secret_key",
        "private_key",
        "key_value",
        "session",
        "csrf",
    }
)

EVENT_TYPE = "audit.recorded"
EVENT_SOURCE = "audit"


def _as_json(changes: Mapping[str, tuple[Any, Any]]) -> dict[str, dict[str, Any]]:
    refused = sorted(name for name in changes if name.lower() in SECRET_FIELDS)
    if refused:
        raise ValueError(f"secret fields are never audited: {', '.join(refused)}")
    return {name: {"before": before, "after": after} for name, (before, after) in changes.items()}


def changes_between(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """The fields whose values differ between two snapshots (a field missing on one side is
    None there)."""
    names = [*before, *(name for name in after if name not in before)]
    return {
        name: (before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name)
    }


async def record(
    conn: Conn,
    *,
    actor: str | None,
    kind: str,
    target: str,
    changes: Mapping[str, tuple[Any, Any]],
    source: str,
    request_id: str | None,
    repo_id: int | None = None,
) -> None:
    """Append one entry in the caller's transaction. `actor` None is the system; `target` names
    what changed for a reader (`acme/app@v1.2.0`, `acme/app`, `user alice`); `changes` maps each
    changed field to its (before, after) values, which must be JSON values."""
    if not conn.is_in_transaction():
        raise RuntimeError("record() must run inside the transaction that makes the change")
    if source not in SOURCES and _PLUGIN_SOURCE.fullmatch(source) is None:
        raise ValueError(f"unknown audit source {source!r}")
    as_json = _as_json(changes)
    entry_id, created_at = await queries.insert(
        conn,
        actor=actor,
        kind=kind,
        target=target,
        changes=as_json,
        request_id=request_id,
        source=source,
        repo_id=repo_id,
    )
    payload = {
        "id": entry_id,
        "created_at": created_at.isoformat(),
        "actor": actor,
        "kind": kind,
        "target": target,
        "changes": as_json,
        "request_id": request_id,
        "source": source,
        "repo_id": repo_id,
    }
    await emit(conn, Event(EVENT_TYPE, EVENT_SOURCE, payload, repo_id=repo_id))


async def record_as(
    conn: Conn,
    origin: Origin,
    *,
    kind: str,
    target: str,
    changes: Mapping[str, tuple[Any, Any]],
    repo_id: int | None = None,
) -> None:
    """`record()` with the actor, source and request id of `origin`."""
    await record(
        conn,
        actor=origin.actor,
        kind=kind,
        target=target,
        changes=changes,
        source=origin.source,
        request_id=origin.request_id,
        repo_id=repo_id,
    )


async def record_here(
    conn: Conn,
    *,
    kind: str,
    target: str,
    changes: Mapping[str, tuple[Any, Any]],
    actor_id: int | None,
    repo_id: int | None = None,
) -> None:
    """`record()` for code that knows the actor's id but not the request: the origin of the
    request being handled (audit.request_var), else (the `forge` CLI) the actor's login looked up
    and the source `cli`."""
    origin = current_origin()
    if origin is None or (origin.actor is None and actor_id is not None):
        login = None
        if actor_id is not None:
            login = await conn.fetchval("SELECT name FROM core.accounts WHERE id = $1", actor_id)
        if origin is None:
            origin = Origin(login, "cli")
        else:
            origin = Origin(login, origin.source, origin.request_id)
    await record_as(conn, origin, kind=kind, target=target, changes=changes, repo_id=repo_id)
