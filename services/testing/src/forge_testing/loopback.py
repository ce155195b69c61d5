"""Blocking HTTP to a process on 127.0.0.1, for tests and tools that drive real processes from
plain (not async) code: tests-e2e, whose requests go through nginx or straight to one service.

`request()` speaks HTTP through http.client; `raw()` sends bytes exactly as given (malformed
heads, stalled bodies) and parses the answer by hand, for what http.client refuses to send.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(
    port: int,
    method: str,
    path: str,
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = 15.0,
) -> Response:
    """One request on a connection of its own, read to the end."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        reply = conn.getresponse()
        return Response(reply.status, reply.headers, reply.read())
    finally:
        conn.close()


def answers(port: int, path: str, statuses: tuple[int, ...] = (200,), timeout: float = 1.0) -> bool:
    """Whether GET `path` answers one of `statuses`; False while nothing listens (a readiness
    probe for `waiting.until`)."""
    try:
        return request(port, "GET", path, timeout=timeout).status in statuses
    except OSError:
        return False


def raw(port: int, data: bytes, timeout: float = 15.0) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are; read the answer until the server closes or says its length."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_reply(sock)


def read_reply(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of the answer arriving on `sock`."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split(" ")[1]), headers, body
