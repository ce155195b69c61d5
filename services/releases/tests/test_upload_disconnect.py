"""A client that disconnects mid-upload, on every upload route (docs/releases.md "Uploads"): one
INFO line, no error and no traceback in the log, nothing stored (no asset, no blob, no temporary
file, no event). Served as `forge serve` serves it (make_client: ForgeTestServer)."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest
from forge_common.config import Settings
from forge_testing.waiting import eventually

from .publish_support import TOKENS, api, auth, outbox, publish_world, stored_files

BOUNDARY = "forge-test-boundary"
PART_HEAD = (
    f"--{BOUNDARY}\r\n"
    'Content-Disposition: form-data; name="attachment"; filename="cut.bin"\r\n'
    "Content-Type: application/octet-stream\r\n\r\n"
).encode()

# (route, how the body is sent): the version-2 API both ways, Gitea's (multipart) and GitHub's
# (raw body) upload routes.
ROUTES = [
    ("/api/v2/repos/owner/pub/releases/{id}/assets?name=cut.bin", "raw"),
    ("/api/v2/repos/owner/pub/releases/{id}/assets", "multipart"),
    ("/api/v1/repos/owner/pub/releases/{id}/assets", "multipart"),
    ("/api/v3/repos/owner/pub/releases/{id}/assets?name=cut.bin", "raw"),
]


async def _cut_upload(port: int, path: str, kind: str) -> None:
    """Declare 4 MiB, send 256 KiB of it, then reset the connection."""
    declared = 4 * 1024 * 1024
    content_type = (
        f"multipart/form-data; boundary={BOUNDARY}"
        if kind == "multipart"
        else "application/octet-stream"
    )
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: token {TOKENS['writer']}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {declared}\r\n\r\n"
    ).encode()
    body = (PART_HEAD if kind == "multipart" else b"") + b"x" * (256 * 1024)
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + body)
    await writer.drain()
    sock = writer.get_extra_info("socket")
    # RST rather than FIN, as a client killed mid-transfer often does
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    writer.close()
    await writer.wait_closed()


@pytest.mark.parametrize(("route", "kind"), ROUTES)
async def test_a_client_gone_mid_upload_costs_one_info_line_and_stores_nothing(
    make_client: Any,
    load: Any,
    db: Any,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
    route: str,
    kind: str,
) -> None:
    await load(publish_world())
    client = await make_client()
    created = await client.post(
        api("owner/pub"), json={"tag_name": "v9.0.0"}, headers=auth("writer")
    )
    assert created.status == 201
    release_id = (await created.json())["id"]
    files_before = stored_files(settings.storage_path)
    events_before = len(await outbox(db))
    caplog.set_level(logging.INFO)
    caplog.clear()

    await _cut_upload(client.port, route.format(id=release_id), kind)

    def said_so() -> bool:
        return any("the client went away" in r.getMessage() for r in caplog.records)

    await eventually(said_so, 10.0, "an INFO line saying the client went away")
    gone = [r for r in caplog.records if "the client went away" in r.getMessage()]
    assert len(gone) == 1 and gone[0].levelno == logging.INFO
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert loud == [], [r.getMessage() for r in loud]
    # nothing stored: no asset on the release, no blob or temporary file, no event
    release = await client.get(f"{api('owner/pub')}/{release_id}", headers=auth("writer"))
    assert release.status == 200 and (await release.json())["assets"] == []
    assert stored_files(settings.storage_path) == files_before
    assert len(await outbox(db)) == events_before
