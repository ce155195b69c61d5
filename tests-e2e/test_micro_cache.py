"""docs/operations.md "Micro-cache": nginx keeps anonymous public GETs of the release API for at
most a second. Identical anonymous checks are answered from it; a request with credentials, a
cookie or a key or signature in its query is never answered from it nor stored; a publish shows
within a second; each answer still carries its own request id; errors are not kept."""

from __future__ import annotations

import json
import math
import random
import re
import socket
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from forge_testing.waiting import until

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

TOKEN = "alice-micro-token"
WORLD = {
    "users": [{"name": "alice", "admin": True, "tokens": [TOKEN]}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0-x86_64.AppImage", "size": 1000}],
                }
            ],
        },
        {"owner": "acme", "name": "hidden", "private": True},
    ],
}
UPDATE = "/api/v2/repos/acme/app/releases/update?version=0.1.0&platform=linux&arch=x64"
LIST = "/api/v2/repos/acme/app/releases"
LATEST = "/api/v2/repos/acme/app/releases/latest"


def status_of(stack: Stack, path: str, headers: dict[str, str] | None = None) -> str:
    reply = stack.get(path, headers)
    assert reply.status in (200, 204, 404), reply.body
    return reply.headers.get("X-Cache-Status", "")


def test_identical_anonymous_checks_are_answered_from_the_cache(stack: Stack) -> None:
    first, second = stack.get(UPDATE), stack.get(UPDATE)
    assert first.status == second.status == 200 and first.body == second.body
    assert second.headers["X-Cache-Status"] == "HIT"
    # the request id is the proxy's, per request, even for an answer from the cache
    assert first.headers["X-Request-Id"] != second.headers["X-Request-Id"]
    stack.get(LIST)
    assert stack.get(LIST).headers["X-Cache-Status"] == "HIT"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v2/repos/acme/app/releases/feeds/tauri/linux/x86_64/0.1.0",
        "/acme/app/darwin-x64/0.1.0",  # update.electronjs.org's shape
    ],
)
def test_update_feeds_are_answered_from_the_cache_too(stack: Stack, path: str) -> None:
    """The feeds are hot paths like the update check (docs/operations.md "Micro-cache")."""
    stack.wait_until_cached(path)
    assert status_of(stack, f"{path}?key=abc") == "BYPASS"


@pytest.mark.parametrize(
    ("query", "headers"),
    [
        ("", {"Authorization": f"token {TOKEN}"}),
        ("", {"Cookie": "session=x"}),
        ("&key=abc", {}),
        ("&signature=abc", {}),
        ("&X-Amz-Signature=abc", {}),
    ],
)
def test_credentials_cookies_and_signed_queries_never_touch_the_cache(
    stack: Stack, query: str, headers: dict[str, str]
) -> None:
    path = f"{UPDATE}&n={uuid.uuid4().hex}{query}"  # an address no other test asked for
    for _ in range(2):
        assert status_of(stack, path, headers) == "BYPASS"
    # what they got was not stored: the same address asked anonymously reaches the service
    assert status_of(stack, path) == ("BYPASS" if query else "MISS")


def test_errors_are_not_kept(stack: Stack) -> None:
    for _ in range(2):
        reply = stack.get("/api/v2/repos/acme/nothing/releases")
        assert reply.status == 404
        assert reply.headers.get("X-Cache-Status") == "MISS"
    assert reply.json()["error"]["request_id"] == reply.headers["X-Request-Id"]


def test_the_service_says_until_when_and_nginx_keeps_that_to_itself(stack: Stack) -> None:
    before = int(time.time())
    public = stack.direct("releases", "GET", UPDATE)
    after = int(time.time())
    assert public.status == 200
    # the end of the second the answer was made in (nginx reads whole seconds)
    assert before <= int(public.headers["X-Accel-Expires"].removeprefix("@")) <= after
    hidden = "/api/v2/repos/acme/hidden/releases"  # a private repository's list: never kept
    private = stack.direct("releases", "GET", hidden, headers={"Authorization": f"token {TOKEN}"})
    assert private.status == 200 and "X-Accel-Expires" not in private.headers
    assert "X-Accel-Expires" not in stack.get(UPDATE).headers


@pytest.mark.alone  # measures time: run after the parallel tests
def test_a_publish_shows_within_one_second(stack: Stack) -> None:
    """Publishes at random offsets within nginx's whole seconds: no request that starts 1 s or more
    after a publish was answered still gets the list or the latest release without it. (The
    service marks each kept answer `X-Accel-Expires: @<the second it was made in>`; a relative
    1 s would keep it until the end of the next whole second, up to 2 s.)"""
    rng = random.Random()
    author = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    for n in range(6):
        time.sleep(rng.random())  # anywhere in the second
        for path in (LIST, LATEST):
            stack.wait_until_cached(path)
        tag = f"v3.{n}.0"
        created = stack.request("POST", LIST, author, json.dumps({"tag_name": tag}).encode())
        assert created.status == 201, created.body
        published = time.monotonic()
        for path in (LIST, LATEST):
            while True:
                asked = time.monotonic() - published
                if tag.encode() in stack.get(path).body:
                    break
                assert asked < 1.0, f"{path} still without {tag} when asked {asked:.3f} s after"
                time.sleep(0.01)


# one line of the access log of the micro-cache's locations (log_format forge): when it ended (to
# the second), its address, and `urt`, "-" for an answer nginx gave from its cache
_LINE = re.compile(
    r'\[(?P<second>[^\]]+)\] "GET (?P<uri>\S+) [^"]*" \d+ \d+ rt=\S+ urt=(?P<urt>\S+)'
)


def _logged(stack: Stack, uri: str) -> list[tuple[str, bool]]:
    """(second, reached the service) of each request for `uri` in nginx's access log."""
    log: Path = next(p.access_log for p in stack.processes if p.access_log)
    found = []
    for line in log.read_text().splitlines():
        match = _LINE.search(line)
        if match is not None and match["uri"] == uri:
            found.append((match["second"], match["urt"] != "-"))
    return found


def _reaching_the_service(stack: Stack, uri: str, sent: int) -> Counter[str]:
    """Per second, the requests for `uri` nginx passed to the service, once all `sent` are
    logged (nginx writes its log every second)."""
    until(lambda: len(_logged(stack, uri)) >= sent, 10, f"{sent} requests logged")
    return Counter(second for second, reached in _logged(stack, uri) if reached)


def _burst(stack: Stack, uri: str, clients: int, seconds: float) -> tuple[int, float]:
    """`clients` threads asking for `uri` back to back for `seconds`: requests made, slowest."""
    made, slowest, lock = [0], [0.0], threading.Lock()
    start = threading.Barrier(clients)

    def client() -> None:
        start.wait()
        end = time.monotonic() + seconds
        while True:
            began = time.monotonic()
            assert stack.get(uri).status in (200, 204)  # 204 after the publish test above
            took = time.monotonic() - began
            with lock:
                made[0] += 1
                slowest[0] = max(slowest[0], took)
            if began + took >= end:
                return

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return made[0], slowest[0]


def test_one_request_a_second_reaches_the_service_whatever_the_concurrency(stack: Stack) -> None:
    """When an address's answer expires, the next request fetches the new one and the requests
    arriving meanwhile are answered with the expired one (`proxy_cache_use_stale updating`)
    instead of all going to the service too.

    Counted over the whole run: an answer is kept until the next whole second
    (`X-Accel-Expires: @<epoch>`), so in E seconds at most ceil(E) + 1 fetches start (the fill,
    then one a second boundary). nginx logs when a request ended, to the second of its cached
    clock, so a fetch that ended late can share a logged second with the next one: per logged
    second, two at most."""
    uri = f"{UPDATE}&n={uuid.uuid4().hex}"
    began = time.monotonic()
    assert stack.get(uri).status in (200, 204)  # filled: the burst starts from a kept answer
    made, _ = _burst(stack, uri, clients=16, seconds=3.5)
    elapsed = time.monotonic() - began
    per_second = _reaching_the_service(stack, uri, made + 1)
    assert per_second and sum(per_second.values()) <= math.ceil(elapsed) + 1, (elapsed, per_second)
    assert max(per_second.values()) <= 2, per_second


def _together(stack: Stack, uri: str, clients: int) -> list[float]:
    """`clients` connections each sending a request for `uri` at the same moment (one thread
    writes them all, connected beforehand): the seconds until each answer was complete."""
    request = f"GET {uri} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    connections = [
        socket.create_connection(("127.0.0.1", stack.nginx_port)) for _ in range(clients)
    ]
    began = time.monotonic()
    for connection in connections:
        connection.sendall(request)
    took = []
    for connection in connections:
        with connection:
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        took.append(time.monotonic() - began)
        assert answer.startswith((b"HTTP/1.1 200", b"HTTP/1.1 204")), answer[:100]
    return took


def test_no_stall_after_a_quiet_spell(stack: Stack) -> None:
    """An address nobody asked for since its answer expired (here 12 s, longer than the old
    `inactive=10s`) is filled by one request while the others, sent at the same moment, wait 50 ms
    at most, not nginx's 500 ms lock check (docs/operations.md "Micro-cache")."""
    uri = f"{UPDATE}&n={uuid.uuid4().hex}"
    assert stack.get(uri).status in (200, 204)
    time.sleep(12)  # the quiet spell itself, not a wait for something to happen
    took = _together(stack, uri, clients=16)
    assert max(took) < 0.3, took
