"""Hostile and careless input against the real processes (one test per kind of input).

The three `forge serve --service` processes behind nginx (tests-e2e/conftest.py), with a short
body-read deadline; a `forge serve --all` of its own for the secret rows. Requests go through
nginx where the row is about what a client on the internet reaches, and straight to a service
where the row is about the service's own HTTP parser or its body-read deadline (nginx answers
those itself). The in-process tests beside each module (services/*/tests/test_hostile.py,
test_http.py, test_serving.py) cover the variants; these prove the real process behaves the same.
Rows covered elsewhere: the OpenAPI documents (make fuzz-smoke, tests-e2e/fuzz) and PostgreSQL
restarted under load (tests-e2e/test_outage.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from forge_common.event_signature import sign
from forge_testing.loopback import raw, read_reply
from forge_testing.ports import free_port
from forge_testing.processes import wait_until_ready

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e
# The tests on this module's stack are beyond the hostile suite's smoke (`make test-full`;
# docs/decisions.md): in-process, services/*/tests/test_hostile*.py and fuzz-smoke send the same.
STACK = pytest.mark.full

TOKEN = "bob-hostile-token"  # owner of acme, site administrator (the admin delivery routes)
BOB = {"Authorization": f"token {TOKEN}"}
HUGE = "9" * 5000  # beyond Python's integer-string limit (4,300 digits)
BODY_DEADLINE = 3.0  # BODY_READ_TIMEOUT of this module's services, seconds
CONTENT = "0123456789"
DOWNLOAD = "/acme/app/releases/download/v1.0.0/App.exe"
RELEASES = "/api/v2/repos/acme/app/releases"
# The value every process used when EVENTS_SECRET was unset, before docs/decisions.md "Secrets"
OLD_DEV_SECRET = "forge-development-events-secret"

WORLD = {
    "users": [{"name": "bob", "admin": True, "tokens": [TOKEN]}],
    "orgs": [
        {
            "name": "acme",
            "visibility": "public",
            "members": [{"user": "bob", "owner": True, "public": True}],
        },
        {"name": "secretorg", "visibility": "private"},
    ],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App.exe", "content": CONTENT}],
                }
            ],
        },
        {"owner": "secretorg", "name": "hidden", "releases": [{"tag": "v1.0.0"}]},
    ],
}


STACK_ENV = {"BODY_READ_TIMEOUT": str(BODY_DEADLINE)}  # the `stack` fixture (conftest.py)


def log_text(stack: Stack) -> str:
    return "\n".join(p.log.read_text(errors="replace") for p in stack.processes if p.log.exists())


def without_request_id(body: bytes) -> Any:
    document = json.loads(body)
    document.get("error", {}).pop("request_id", None)
    return document


# --- credentials that are not UTF-8 -------------------------------------------------------------


@STACK
@pytest.mark.parametrize("service", ["releases", "orgs", "gateway"])
def test_a_token_that_is_not_utf8_is_401_even_on_healthz(stack: Stack, service: str) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    request += b"Authorization: token \xff\xfe\x80abc\r\n\r\n"
    status, headers, body = raw(stack.ports[service], request)
    assert status == 401, body[:200]
    assert headers.get("x-request-id") and b"Traceback" not in body


@STACK
def test_a_token_that_is_not_utf8_is_401_through_the_proxy(stack: Stack) -> None:
    request = f"GET {RELEASES} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
    request += b"Authorization: token \xff\xfe\x80abc\r\n\r\n"
    status, headers, body = raw(stack.nginx_port, request)
    assert status == 401, body[:200]
    assert headers.get("x-request-id")
    assert json.loads(body)["error"]["status"] == 401


# --- numbers with thousands of digits ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "length"),
    [(f"bytes={HUGE}-", 416, 0), (f"bytes=0-{HUGE}", 206, 10), (f"bytes=-{HUGE}", 206, 10)],
)
@STACK
def test_a_range_of_thousands_of_digits_is_416_or_the_whole_file(
    stack: Stack, spec: str, status: int, length: int
) -> None:
    reply = stack.get(DOWNLOAD, {"Range": spec})
    assert reply.status == status, reply.body[:200]
    if status == 206:
        assert reply.body == CONTENT.encode()[:length]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("PATCH", f"{RELEASES}/{HUGE}", 404),
        ("DELETE", f"{RELEASES}/{HUGE}", 404),
        ("DELETE", f"{RELEASES}/1/assets/{HUGE}", 404),
        ("GET", f"/api/v1/admin/plugins/event-recorder/deliveries/{HUGE}", 404),
        ("GET", f"{RELEASES}?limit={HUGE}", 200),  # list rule: an unusable limit is the default
    ],
)
@STACK
def test_ids_and_limits_of_thousands_of_digits_are_4xx(
    stack: Stack, method: str, path: str, status: int
) -> None:
    reply = stack.request(method, path, {**BOB, "Content-Type": "application/json"}, b"{}")
    assert reply.status == status, reply.body[:200]


@STACK
def test_an_integer_of_400_digits_in_json_is_422_naming_the_field(stack: Stack) -> None:
    body = b'{"name": "Big", "display_order": ' + b"9" * 400 + b"}"
    headers = {**BOB, "Content-Type": "application/json"}
    reply = stack.request("POST", "/api/v1/orgs/acme/pinned/groups", headers, body)
    assert reply.status == 422, reply.body[:200]
    assert "display_order" in reply.body.decode()


# --- uploads -------------------------------------------------------------------------------------


def _release_id(stack: Stack) -> int:
    (release,) = stack.get(RELEASES).json()
    return int(release["id"])


@STACK
def test_a_multipart_part_header_with_a_control_character_is_400(stack: Stack) -> None:
    body = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n'
        b"X-\x01: y\r\n\r\nbytes\r\n--xyz--\r\n"
    )
    headers = {**BOB, "Content-Type": "multipart/form-data; boundary=xyz"}
    reply = stack.request("POST", f"{RELEASES}/{_release_id(stack)}/assets", headers, body)
    assert reply.status == 400, reply.body[:200]
    assert reply.json()["error"]["message"] == "Malformed multipart body"


@STACK
@pytest.mark.parametrize("name", ["%ff%fe.bin", "%E2%80%AEexe.txt", "a%C2%85b.zip"])
def test_asset_names_that_are_not_what_they_seem_are_422(stack: Stack, name: str) -> None:
    path = f"{RELEASES}/{_release_id(stack)}/assets?name={name}"
    reply = stack.request("POST", path, BOB, b"bytes")
    assert reply.status == 422, reply.body[:200]
    assert reply.json()["error"]["message"].startswith("name ")


@STACK
def test_an_uploaded_html_file_is_never_served_to_render(stack: Stack) -> None:
    headers = {**BOB, "Content-Type": "text/html"}
    path = f"{RELEASES}/{_release_id(stack)}/assets?name=page.html"
    assert stack.request("POST", path, headers, b"<script>alert(1)</script>").status == 201
    reply = stack.get("/acme/app/releases/download/v1.0.0/page.html")
    assert reply.status == 200
    assert not reply.headers["Content-Type"].startswith("text/html")
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["Content-Disposition"].startswith("attachment;")


# --- an owner the caller may not see ------------------------------------------------------------


@STACK
def test_a_private_organization_and_its_repository_do_not_exist_anonymously(stack: Stack) -> None:
    existing = stack.get("/api/v2/repos/secretorg/hidden/releases")
    missing = stack.get("/api/v2/repos/secretorg/nothing-here/releases")
    assert existing.status == missing.status == 404
    assert without_request_id(existing.body) == without_request_id(missing.body)
    assert existing.json()["error"]["message"] == "Repository not found"


# --- what the HTTP parser refuses ---------------------------------------------------------------

MALFORMED = {
    "bad byte in a header name": b"Bad\x01Name: v\r\n\r\n",
    "header over 8190 bytes": b"X-Big: " + b"a" * 9000 + b"\r\n\r\n",
    "folded header": b"X-Folded: one\r\n two\r\n\r\n",
}


@STACK
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_what_the_parser_refuses_is_a_json_400_with_a_request_id_and_no_token_logged(
    stack: Stack, case: str
) -> None:
    secret = f"parser-{uuid.uuid4().hex}"
    request = f"GET {RELEASES} HTTP/1.1\r\nHost: x\r\nAuthorization: token {secret}\r\n".encode()
    status, headers, body = raw(stack.ports["releases"], request + MALFORMED[case])
    assert status == 400
    assert headers.get("x-request-id") and headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"]["request_id"] == headers["x-request-id"]
    time.sleep(0.2)  # the log line is written after the answer
    assert secret not in log_text(stack)


@STACK
def test_a_bogus_expect_header_is_a_json_417(stack: Stack) -> None:
    request = (
        f"POST {RELEASES} HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nConnection: close\r\n"
        "Content-Length: 2\r\n\r\n{}"
    ).encode()
    status, headers, body = raw(stack.ports["releases"], request)
    assert status == 417
    assert headers.get("x-request-id") and json.loads(body)["error"]["status"] == 417


# --- bodies stalled after their headers ---------------------------------------------------------

STALLED = [
    ("releases", f"POST {RELEASES} HTTP/1.1"),
    ("orgs", "POST /api/v1/orgs/acme/pinned/groups HTTP/1.1"),
    ("gateway", "POST /internal/v1/events HTTP/1.1"),
]


def _stalled_head(line: str) -> bytes:
    return (
        f"{line}\r\nHost: x\r\nAuthorization: token {TOKEN}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n{"
    ).encode()


@STACK
@pytest.mark.parametrize(("service", "line"), STALLED)
@pytest.mark.alone  # measures time: run after the parallel tests
def test_a_body_stalled_after_its_headers_is_408_within_the_deadline(
    stack: Stack, service: str, line: str
) -> None:
    started = time.monotonic()
    status, headers, body = raw(stack.ports[service], _stalled_head(line))
    waited = time.monotonic() - started
    assert status == 408, body[:200]
    assert headers.get("x-request-id")
    assert BODY_DEADLINE - 0.5 < waited < BODY_DEADLINE + 5
    assert "Traceback" not in log_text(stack)


def _latencies(stack: Stack, count: int) -> list[float]:
    spent = []
    for _ in range(count):
        started = time.monotonic()
        reply = stack.direct("releases", "GET", RELEASES)
        spent.append(time.monotonic() - started)
        assert reply.status == 200
    return spent


@STACK
@pytest.mark.alone  # measures time: run after the parallel tests
def test_hundreds_of_stalled_bodies_leave_normal_requests_their_latency(stack: Stack) -> None:
    """300 clients stall after their headers; ordinary requests meanwhile answer about as fast as
    before (relative to a baseline measured here, so a loaded machine does not fail it), and
    every stalled client gets its 408 once the deadline passes."""
    _latencies(stack, 5)  # warm up
    baseline = statistics.median(_latencies(stack, 30))
    port = stack.ports["releases"]
    sockets: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", port), timeout=BODY_DEADLINE + 10)
            sock.sendall(_stalled_head(f"POST {RELEASES} HTTP/1.1"))
            sockets.append(sock)
        assert time.monotonic() - started < BODY_DEADLINE, "the stall outlived the measurement"
        loaded = statistics.median(_latencies(stack, 30))
        assert loaded < max(3 * baseline, baseline + 0.05), (baseline, loaded)
        statuses = {read_reply(sock)[0] for sock in sockets}
        assert statuses == {408}
        assert time.monotonic() - started < BODY_DEADLINE + 10
    finally:
        for sock in sockets:
            sock.close()
    assert "Traceback" not in log_text(stack)
    alone, beside = baseline * 1000, loaded * 1000
    print(f"median latency: {alone:.1f} ms alone, {beside:.1f} ms beside 300 stalls")


# --- no fixed events secret ----------------------------------------------------------------------


def _event_headers(secret: str, body: bytes) -> dict[str, str]:
    stamp = int(time.time())
    return {
        "Content-Type": "application/json",
        "X-Forge-Timestamp": str(stamp),
        "X-Forge-Signature": sign(secret, stamp, body),
    }


@STACK
def test_serve_all_without_a_secret_refuses_events_signed_with_a_guessable_one(
    stack: Stack, e2e_database: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVENTS_SECRET"}
    port = free_port()
    env |= {
        "DATABASE_URL": e2e_database,
        "STORAGE_PATH": str(tmp_path),
        "APP_URL": f"http://127.0.0.1:{port}/",
        "LOG_LEVEL": "WARNING",
    }
    argv = [sys.executable, "-m", "forge_common.cli", "serve", "--all", "--host", "127.0.0.1"]
    process = subprocess.Popen([*argv, "--port", str(port)], env=env)
    try:
        asyncio.run(wait_until_ready(f"http://127.0.0.1:{port}/readyz", exit_code=process.poll))
        event = {
            "id": str(uuid.uuid4()),
            "type": "release.published",
            "occurred_at": "2026-01-02T03:04:05.123456Z",
            "source": "releases",
            "repo_id": 1,
            "org_id": None,
            "actor_id": 1,
            "payload": {"tag": "v9.9.9", "release_id": 1, "assets": []},
        }
        body = json.dumps({"events": [event]}).encode()
        for guess in (OLD_DEV_SECRET, ""):
            reply = stack.request(
                "POST", "/internal/v1/events", _event_headers(guess, body), body, port=port
            )
            assert reply.status == 401, (guess, reply.body[:200])
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()


@pytest.mark.parametrize("service", ["releases", "orgs", "gateway"])
def test_a_service_started_alone_without_the_secret_refuses_to_start(
    e2e_database: str, service: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVENTS_SECRET"}
    env["DATABASE_URL"] = e2e_database
    argv = [sys.executable, "-m", "forge_common.cli", "serve", "--service", service]
    done = subprocess.run(
        [*argv, "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    # releases also names URL_SIGNING_SECRET (docs/access.md "Update keys")
    assert "must be set to start a service alone" in done.stderr and "EVENTS_SECRET" in done.stderr
