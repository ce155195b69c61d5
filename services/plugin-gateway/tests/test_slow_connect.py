"""A plugin whose connection takes longer than the reconnect backoff still joins: one attempt may
take `connect_timeout` (docs/plugins.md "Connections"), here through a proxy that holds each new
connection 0.8 s before passing it on, as a slow link or a busy host does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from forge_testing.waiting import eventually

HELD = 0.8  # seconds: above FAST's reconnect_max (0.2 s), which bounded each attempt before


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def slow_proxy(upstream_port: int) -> AsyncIterator[int]:
    """127.0.0.1:port, forwarding to `upstream_port` after holding each connection HELD s."""
    tasks: set[asyncio.Task[None]] = set()

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        await asyncio.sleep(HELD)
        upstream_r, upstream_w = await asyncio.open_connection("127.0.0.1", upstream_port)
        for task in (_pipe(client_r, upstream_w), _pipe(upstream_r, client_w)):
            tasks.add(asyncio.ensure_future(task))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_plugin_slower_to_connect_than_the_backoff_joins(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("far"))
    port = int(fake.address.rsplit(":", 1)[1])
    async with slow_proxy(port) as proxied:
        client = await gateway([helpers.entry(fake, address=f"127.0.0.1:{proxied}")])
        plugin = helpers.managed(client, "far")
        await eventually(lambda: plugin.state == "ready", within=15, what="the far plugin joined")
        assert (await client.get("/api/v1/plugins/far/hello")).status == 200
        await client.close()
