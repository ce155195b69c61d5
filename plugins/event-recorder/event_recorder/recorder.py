"""The event recorder: keeps the events it receives, once each, and lists them."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from itertools import count
from typing import Any

from forge_plugin_sdk import EVENT_TYPES, Event, HTTPError, Plugin, PluginError, Request

DEFAULT_MAX_EVENTS = 1000


class Recorder:
    """In-memory store of events, deduplicated on the event id, oldest dropped first.

    Delivery is at least once, so the same event (same id) can arrive again on
    a retry or a replay: it is counted as a duplicate, not recorded twice. An
    event without an id cannot be deduplicated and is always recorded. Once an
    event is evicted its id is forgotten, which bounds memory.
    """

    def __init__(self, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        self.max_events = max_events
        self.duplicates = 0
        self._events: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._anonymous = count(1)

    def record(self, event: Event) -> bool:
        """Store ``event``; False when an event with the same id is already stored."""
        key = event.id or f"anonymous-{next(self._anonymous)}"
        if key in self._events:
            self.duplicates += 1
            return False
        self._events[key] = {
            "id": event.id,
            "type": event.type,
            "timestamp": event.timestamp,
            "repo_id": event.repo_id,
            "org_id": event.org_id,
            "delivery_id": event.delivery_id,
            "attempt": event.attempt,
            "payload": event.payload,
        }
        while len(self._events) > self.max_events:
            self._events.popitem(last=False)
        return True

    def events(self, event_type: str | None = None) -> list[dict[str, Any]]:
        """Stored events, oldest first, optionally of one type."""
        return [e for e in self._events.values() if event_type in (None, e["type"])]

    def __len__(self) -> int:
        return len(self._events)


def create_plugin(recorder: Recorder | None = None) -> Plugin:
    """Build the event-recorder plugin around ``recorder`` (a new one by default)."""
    store = recorder if recorder is not None else Recorder()
    plugin = Plugin(
        "event-recorder",
        "0.1.0",
        "Records every forge event it receives and lists them over HTTP",
        permissions=["events:read"],
    )

    @plugin.on_initialize
    async def configure(config: Mapping[str, str]) -> None:
        # Optional setting from PLUGINS_FILE: {"config": {"max_events": "500"}}.
        raw = config.get("max_events")
        if raw is None:
            return
        if not raw.isdigit() or int(raw) < 1:
            raise PluginError(f"max_events must be a positive integer, not {raw!r}")
        store.max_events = int(raw)

    @plugin.on_event(*EVENT_TYPES)
    async def record(event: Event) -> None:
        store.record(event)

    @plugin.route("GET", "/events", "Recorded events, oldest first (site admins); ?type= filters")
    async def list_events(request: Request) -> list[dict[str, Any]]:
        # Events about private repositories reach every subscribed plugin, so
        # only site admins may read them back.
        if request.caller.anonymous:
            raise HTTPError(401, "sign in as a site admin to list events")
        if not request.caller.admin:
            raise HTTPError(403, "only site admins may list events")
        event_type = request.query.get("type") or None
        if event_type is not None and event_type not in EVENT_TYPES:
            raise HTTPError(422, f"unknown event type {event_type!r}")
        return store.events(event_type)

    @plugin.route("GET", "/health", "Liveness and counters")
    async def health(request: Request) -> dict[str, Any]:
        return {"status": "ok", "recorded": len(store), "duplicates": store.duplicates}

    return plugin
