"""`forge serve --all` as a real process (docs/plugins.md, docs/events.md): the gateway joins the
plugins of PLUGINS_FILE, GATEWAY_URL defaults to the process itself so a committed change reaches
the plugin's OnEvent with no set-up, and SIGINT sends Shutdown."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from forge_common.config import Settings
from forge_common.outbox import Event, emit
from forge_testing.processes import wait_until_ready


async def test_serve_all_relays_events_to_its_own_gateway(
    settings: Settings, db: Any, fakes: Any, helpers: Any, tmp_path: Path
) -> None:
    fake = await fakes(helpers.FakePlugin("rec", events=["org.pin.created"]))
    plugins = tmp_path / "plugins.json"
    plugins.write_text(json.dumps({"plugins": [{"name": "rec", "address": fake.address}]}))
    port = helpers.free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "PLUGINS_FILE": str(plugins),
        "STORAGE_PATH": str(tmp_path / "storage"),
        "LOG_FORMAT": "text",
    }
    env.pop("GATEWAY_URL", None)
    log_file = tmp_path / "forge.log"
    log_stream = log_file.open("wb")  # a file, not a pipe: a full pipe would block the server
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "forge_common.cli",
        "serve",
        "--all",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await wait_until_ready(
            f"http://127.0.0.1:{port}/readyz", exit_code=lambda: process.returncode
        )
        assert fake.calls["Initialize"] == 1
        async with db.transaction():
            event = Event("org.pin.created", "orgs", {"repo": "app"}, org_id=3)
            await emit(db, event)
        await helpers.eventually(lambda: fake.calls["OnEvent"] == 1, within=15)
        assert fake.event_ids() == [str(event.id)]
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()
        log_stream.close()
    assert fake.calls["Shutdown"] == 1, log_file.read_text(errors="replace")
