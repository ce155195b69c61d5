"""The gateway with a plugin written on the SDK (the example event-recorder), over TCP and a unix
socket, and inside `forge serve --all`, where the three services share one application."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from event_recorder.recorder import create_plugin
from forge_common.app import create_app as create_common_app
from forge_common.config import Settings
from forge_common.service import installed_services
from forge_gateway.keys import PLUGIN_MANAGER

ROOT = {"Authorization": "token root-token"}


async def test_sdk_plugin_joins_and_serves_its_routes(
    gateway: Any, helpers: Any, gateway_world: Any
) -> None:
    plugin = create_plugin()
    port = await plugin.start("127.0.0.1:0")
    try:
        client = await gateway(
            [
                helpers.entry(
                    "event-recorder", address=f"127.0.0.1:{port}", config={"max_events": "5"}
                )
            ]
        )
        managed = helpers.managed(client, "event-recorder")
        assert managed.state == "ready", managed.error
        assert plugin.config == {"max_events": "5"}
        assert managed.manifest is not None
        assert "release.published" in managed.manifest.subscribed_events
        response = await client.get(
            "/api/v1/plugins/event-recorder/health", headers={"Authorization": "token alice-token"}
        )
        assert response.status == 200
        assert (await response.json())["status"] == "ok"
        # The recorder lists events to site admins only: it reads the identity we set.
        response = await client.get("/api/v1/plugins/event-recorder/events")
        assert response.status == 401
        response = await client.get("/api/v1/plugins/event-recorder/events?type=nope", headers=ROOT)
        assert response.status == 422  # the plugin's own error status passes through
        assert (await client.post("/api/v1/plugins/event-recorder/events")).status == 405
        await client.close()
    finally:
        await plugin.stop(0)


async def test_plugin_on_a_unix_socket(gateway: Any, helpers: Any, tmp_path: Path) -> None:
    plugin = create_plugin()
    socket = tmp_path / "recorder.sock"
    await plugin.start(f"unix:{socket}")
    try:
        client = await gateway([helpers.entry("rec", address=f"unix:{socket}")])
        assert helpers.managed(client, "rec").state == "ready"
        response = await client.get("/api/v1/plugins/rec/events", headers=ROOT)
        assert response.status == 200 and await response.json() == []
        await client.close()
    finally:
        await plugin.stop(0)


async def test_gateway_inside_serve_all_shares_the_app(
    aiohttp_client: Any, fakes: Any, helpers: Any, gateway_world: Any, tmp_path: Path
) -> None:
    """`forge serve --all`: every installed service in one app; the gateway's manager runs as a
    cleanup context under its own key and its routes do not collide with the others'."""
    fake = await fakes(helpers.FakePlugin("hello"))
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps({"plugins": [helpers.entry(fake)]}))
    settings = Settings(
        database_url=gateway_world.settings.database_url,
        app_url="http://forge.test/",
        storage_path=tmp_path / "storage",
        plugins_file=path,
    )
    services = list(installed_services().values())
    assert "gateway" in {s.name for s in services}
    client = await aiohttp_client(create_common_app(dataclasses.replace(settings), services))
    manager = client.app[PLUGIN_MANAGER]
    await helpers.eventually(lambda: manager.get("hello").state == "ready")
    assert (await client.get("/api/v1/plugins/hello/hello")).status == 200
    response = await client.get(
        "/api/v1/admin/plugins", headers={"Authorization": "token root-token"}
    )
    assert [p["name"] for p in await response.json()] == ["hello"]
    # The pages (docs/pages.md), added last to the shared router, shadow no other route.
    for path, kind in (
        ("/healthz", "application/json"),
        ("/api/v1/openapi.json", "application/json"),
        ("/api/v2/openapi.json", "application/json"),
        ("/avatars/nobody", "image/svg+xml"),
    ):
        reply = await client.get(path)
        assert (reply.status, reply.content_type) == (200, kind), path
    for path in ("/nobody", "/nobody/app", "/nobody/app/releases", "/nobody/app/download"):
        reply = await client.get(path)
        assert (reply.status, reply.content_type) == (404, "text/html"), path
    await client.close()
    assert fake.calls["Shutdown"] == 1
