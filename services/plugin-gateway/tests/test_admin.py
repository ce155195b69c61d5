"""`GET /api/v1/admin/plugins` (docs/plugins.md "Admin endpoints"): site admins see every plugin's
address, state, reported and negotiated protocol version, manifest, last health result and breaker
state."""

from __future__ import annotations

from typing import Any

ROOT = {"Authorization": "token root-token"}


async def test_admin_listing_is_401_for_anonymous_and_403_for_other_users(
    gateway: Any, helpers: Any
) -> None:
    client = await gateway([])
    response = await client.get("/api/v1/admin/plugins")
    assert response.status == 401
    response = await client.get(
        "/api/v1/admin/plugins", headers={"Authorization": "token alice-token"}
    )
    assert response.status == 403
    assert await response.json() == {"message": "Only site administrators can list plugins"}


async def test_admin_listing_shows_state_versions_manifest_health_and_breaker(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    ready = await fakes(
        helpers.FakePlugin(
            "ready", protocol_version=0, routes=[("GET", "/a")], events=["release.published"]
        )
    )
    port = helpers.free_port()
    client = await gateway(
        [
            helpers.entry(ready, config={"api_key": "s3cr3t"}, health_repositories=["acme/*"]),
            helpers.entry("gone", address=f"127.0.0.1:{port}"),
            helpers.entry("off", address="unix:/tmp/off.sock", enabled=False),
        ]
    )
    plugin = helpers.managed(client, "ready")
    await helpers.eventually(lambda: plugin.health is not None, what="a health check")
    response = await client.get("/api/v1/admin/plugins", headers=ROOT)
    assert response.status == 200
    text = await response.text()
    assert "s3cr3t" not in text  # config values may be credentials
    listing = {p["name"]: p for p in await response.json()}
    assert list(listing) == ["ready", "gone", "off"]

    first = listing["ready"]
    assert first["address"] == ready.address
    assert first["state"] == "ready" and first["enabled"] is True
    assert first["reported_protocol_version"] == 0
    assert first["negotiated_protocol_version"] == 1
    assert first["config_keys"] == ["api_key"]
    assert first["manifest"]["name"] == "ready"
    assert first["manifest"]["routes"] == [{"method": "GET", "path": "/a", "description": ""}]
    assert first["manifest"]["subscribed_events"] == ["release.published"]
    assert first["health"]["healthy"] is True and first["health"]["status"] == "SERVING"
    assert first["health"]["checked_at"].endswith("Z")
    assert first["breaker"]["state"] == "closed"
    assert first["timeouts"]["HealthCheck"] == 0.5
    assert first["timeouts"]["GetReleaseHealth"] == 10.0
    assert first["health_repositories"] == ["acme/*"]
    assert first["deliveries"] == {"pending": 0, "dead": 0}

    gone = listing["gone"]
    assert gone["state"] == "down" and gone["error"]
    assert gone["reported_protocol_version"] is None and gone["manifest"] is None

    assert gone["health_repositories"] == []  # none unless granted

    assert listing["off"]["state"] == "disabled"
    assert listing["off"]["address"] == "unix:/tmp/off.sock"
