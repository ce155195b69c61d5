"""Declaring a plugin: manifest building and validation."""

from __future__ import annotations

import pytest
from forge_plugin_sdk import EVENT_TYPES, Event, Plugin, Request


async def _noop_event(event: Event) -> None:
    return None


async def _noop_route(request: Request) -> str:
    return ""


def test_manifest_collects_declarations_in_order():
    plugin = Plugin("p", "2.0.0", "desc", permissions=("a", "b"), license_tier="pro")
    plugin.on_event("org.pin.created", "release.created")(_noop_event)
    plugin.on_event("release.created")(_noop_event)
    plugin.route("get", "/x", "the x")(_noop_route)
    manifest = plugin.manifest.to_proto()
    assert list(manifest.subscribed_events) == ["org.pin.created", "release.created"]
    assert [(r.method, r.path, r.description) for r in manifest.routes] == [("GET", "/x", "the x")]
    assert list(manifest.required_permissions) == ["a", "b"]
    assert (manifest.name, manifest.version, manifest.license_tier) == ("p", "2.0.0", "pro")


def test_duplicate_route_is_refused():
    plugin = Plugin("p", "1")
    plugin.route("GET", "/x")(_noop_route)
    with pytest.raises(ValueError, match="already declared"):
        plugin.route("get", "/x")(_noop_route)


@pytest.mark.parametrize("path", ["x", "/x?y=1", "/a b", ""])
def test_bad_route_path_is_refused(path):
    with pytest.raises(ValueError, match="invalid route path"):
        Plugin("p", "1").route("GET", path)(_noop_route)


def test_bad_method_and_empty_event_list_are_refused():
    with pytest.raises(ValueError, match="invalid HTTP method"):
        Plugin("p", "1").route("GE T", "/x")(_noop_route)
    with pytest.raises(ValueError, match="at least one"):
        Plugin("p", "1").on_event()(_noop_event)


def test_event_types_are_the_fourteen_of_the_design_and_the_account_events():
    # the design's fourteen, then the eleven of the account administration, then the audit
    # log's entry (docs/events.md)
    assert len(EVENT_TYPES) == len(set(EVENT_TYPES)) == 26
    assert EVENT_TYPES[25] == "audit.recorded"
    assert EVENT_TYPES[13] == "org.member.concealed"
    assert EVENT_TYPES[14] == "org.created"
    assert "release.asset.uploaded" in EVENT_TYPES
    assert "org.member.concealed" in EVENT_TYPES
