"""Zero-copy sending of a file's bytes on an HTTP connection, under any event loop.

aiohttp's FileResponse uses `loop.sendfile`, which uvloop (what `forge serve` runs on) does not
have (MagicStack/uvloop#228): aiohttp then reads the file into Python and writes it, about 8 ms
of CPU per 10 MiB download (bench/RESULTS.md). `send_file` does what asyncio's own loop does in
`_sendfile_native` (selector_events.py, unix_events.py): once the response headers have left the
transport, `os.sendfile` has the kernel copy the file straight to the socket, and when the socket
is full it waits until it is writable again (one wait after each call, as asyncio, so that other
connections get their turn in between).

Two differences from asyncio's:
- the socket is used through a duplicate descriptor: uvloop refuses to watch a descriptor its
  transport owns (`add_writer` raises), and the duplicate keeps the socket ours should the
  transport close its own mid-file (that number could then be reused by a new connection, which
  would receive our bytes);
- nothing is sent where the bytes would bypass what the transport does: TLS, a transport without
  a socket (tests), bytes still queued in the transport. The caller then writes the file the
  usual way.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable
from typing import IO, Any


def _socket_fd(transport: asyncio.Transport | None) -> int | None:
    """The transport's socket descriptor when bytes written to it go out as they are."""
    # (uvloop's transports are not subclasses of asyncio's: no isinstance here)
    if transport is None or transport.is_closing():
        return None
    if transport.get_extra_info("ssl_object") is not None:
        return None
    sock = transport.get_extra_info("socket")
    if sock is None or transport.get_write_buffer_size():  # queued bytes must go first
        return None
    fd: int = sock.fileno()
    return fd if fd >= 0 else None


async def send_file(
    transport: asyncio.Transport | None,
    file: IO[Any],
    offset: int,
    count: int,
    on_sent: Callable[[int], None],
) -> bool:
    """Send `count` bytes of `file` from `offset` on the transport's socket, calling `on_sent`
    with each amount the kernel took. False, with nothing sent, where that is not possible (see
    the module's docstring). Raises ConnectionError when the client goes away, EOFError when the
    file ends early and OSError when it cannot be read (the client then has fewer bytes than
    announced: close the connection)."""
    fd = _socket_fd(transport)
    if fd is None:
        return False
    assert transport is not None
    loop = asyncio.get_running_loop()
    sock = os.dup(fd)  # non-blocking like the original: the flag belongs to the shared socket
    try:
        first = True
        while count > 0:
            if not first:
                await _writable(loop, sock)
                if transport.is_closing():  # the connection was lost or closed meanwhile
                    raise ConnectionResetError("the connection closed mid-file")
            try:
                n = os.sendfile(sock, file.fileno(), offset, count)
            except (BlockingIOError, InterruptedError):
                first = False
                continue
            except ConnectionError:
                raise
            except OSError as exc:
                if exc.errno == errno.ENOTCONN:  # as asyncio: a connection gone is one error
                    raise ConnectionResetError("the connection closed mid-file") from exc
                if first:  # not a file the kernel can send from (asyncio falls back likewise)
                    return False
                raise
            if n == 0:
                raise EOFError(f"the file ended {count} bytes early")
            first = False
            offset += n
            count -= n
            on_sent(n)
    finally:
        os.close(sock)
    return True


async def _writable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    """Until `fd` can take more bytes (or has failed: the next send says how)."""
    ready = loop.create_future()

    def wake() -> None:
        loop.remove_writer(fd)  # level-triggered: would fire again every iteration
        if not ready.done():
            ready.set_result(None)

    loop.add_writer(fd, wake)
    try:
        await ready
    finally:
        loop.remove_writer(fd)  # cancelled while waiting: stop watching a descriptor we close
