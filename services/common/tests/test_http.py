"""Auth and error middlewares (docs/http.md): token forms, unknown tokens, error bodies of
both API versions, malformed and oversize bodies, 500 without internals, request ids."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

import pytest
from aiohttp import web
from forge_common.app import create_app
from forge_common.auth import viewer_of
from forge_common.body import optional_int, read_json_object, required_str, streams_body
from forge_common.keys import DB_POOL
from forge_common.render import json_response
from forge_common.service import Service

SECRET = "connection string postgres://user:hunter2@db"


async def whoami(request: web.Request) -> web.Response:
    viewer = viewer_of(request)
    return json_response({"login": viewer.login if viewer else None})


async def boom(request: web.Request) -> web.Response:
    raise RuntimeError(SECRET)


async def echo(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    return json_response({"name": required_str(body, "name"), "n": optional_int(body, "n")})


@streams_body
async def count_bytes(request: web.Request) -> web.Response:
    total = 0
    async for chunk in request.content.iter_any():
        total += len(chunk)
    return json_response({"bytes": total})


def setup(app: web.Application, settings: object) -> None:
    for prefix in ("/api/v1", "/api/v2"):
        app.router.add_get(f"{prefix}/whoami", whoami)
        app.router.add_get(f"{prefix}/boom", boom)
        app.router.add_post(f"{prefix}/echo", echo)
    app.router.add_post("/api/v2/count", count_bytes)


@pytest.fixture
async def client(aiohttp_client, settings, load):
    await load({"users": [{"name": "alice", "tokens": ["alice-token"]}]})
    tight = replace(settings, max_body_bytes=1024, body_read_timeout=0.5)
    app = create_app(tight, [Service("t", None, None, setup)])
    return await aiohttp_client(app)


async def test_no_authorization_is_anonymous(client):
    response = await client.get("/api/v2/whoami")
    assert response.status == 200
    assert await response.json() == {"login": None}


@pytest.mark.parametrize("scheme", ["token", "Bearer", "bearer", "TOKEN"])
async def test_both_header_forms_authenticate(client, scheme):
    response = await client.get(
        "/api/v2/whoami", headers={"Authorization": f"{scheme} alice-token"}
    )
    assert await response.json() == {"login": "alice"}


@pytest.mark.parametrize("header", ["token wrong", "Bearer ", "Basic YWxpY2U6eA==", "alice-token"])
async def test_unknown_or_malformed_token_is_401_never_anonymous(client, header):
    response = await client.get("/api/v2/whoami", headers={"Authorization": header})
    assert response.status == 401
    body = await response.json()
    assert body["error"]["code"] == "AuthTokenInvalid"


async def test_v1_error_body_shape(client):
    response = await client.get("/api/v1/whoami", headers={"Authorization": "token nope"})
    assert response.status == 401
    assert await response.json() == {"message": "Invalid access token"}


async def test_malformed_json_is_400(client):
    response = await client.post("/api/v2/echo", data=b"{nope")
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "ValInvalidInput"


async def test_wrong_type_is_422_naming_the_field(client):
    response = await client.post("/api/v1/echo", json={"name": "x", "n": "seven"})
    assert response.status == 422
    assert await response.json() == {"message": "n must be an integer", "errors": ["n"]}
    response = await client.post("/api/v1/echo", json={"name": "x", "n": True})
    assert response.status == 422
    response = await client.post("/api/v1/echo", json=["not", "an", "object"])
    assert response.status == 422


async def test_oversize_body_is_413(client):
    response = await client.post("/api/v2/echo", data=b'{"name": "' + b"x" * 4096 + b'"}')
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "PayloadTooLarge"


async def test_unexpected_exception_is_500_without_internals(client, caplog):
    with caplog.at_level(logging.ERROR):
        response = await client.get("/api/v2/boom", headers={"X-Request-Id": "req-42"})
    assert response.status == 500
    text = await response.text()
    assert "hunter2" not in text and "RuntimeError" not in text and "Traceback" not in text
    body = await response.json()
    assert body["error"] == {
        "code": "InternalError",
        "message": "Internal server error",
        "status": 500,
        "request_id": "req-42",
    }
    # the log keeps what the caller must not see, under the same request id
    assert any(SECRET in (r.exc_text or str(r.exc_info)) for r in caplog.records)


async def test_request_id_is_echoed_or_made(client):
    response = await client.get("/api/v2/whoami", headers={"X-Request-Id": "abc-123"})
    assert response.headers["X-Request-Id"] == "abc-123"
    response = await client.get("/api/v2/whoami")
    assert len(response.headers["X-Request-Id"]) == 32
    # a hostile id is replaced, not echoed into our headers and logs
    response = await client.get("/api/v2/whoami", headers={"X-Request-Id": "a b<script>"})
    assert response.headers["X-Request-Id"] != "a b<script>"


async def test_unknown_route_and_wrong_method_use_our_error_body(client):
    response = await client.get("/api/v2/nothing-here")
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "NotFound"
    response = await client.delete("/api/v1/whoami")
    assert response.status == 405
    assert "GET" in response.headers["Allow"]


async def test_health_and_readiness(client):
    assert (await client.get("/healthz")).status == 200
    response = await client.get("/readyz")
    assert response.status == 200
    assert await response.json() == {"status": "ok"}


async def test_readiness_fails_when_the_database_does_not_answer(client):
    await client.app[DB_POOL].close()
    response = await client.get("/readyz")
    assert response.status == 503
    assert (await client.get("/healthz")).status == 200  # the process itself is still up


async def test_token_bytes_that_are_not_utf8_are_401_not_500(client):
    # aiohttp decodes header bytes that are not UTF-8 to lone surrogates; raw bytes on the wire
    for path in ("/api/v2/whoami", "/api/v1/whoami", "/healthz"):
        reader, writer = await asyncio.open_connection(client.host, client.port)
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".encode()
            + b"Authorization: token \xff\xfe\x80abc\r\n\r\n"
        )
        await writer.drain()
        reply = await reader.read()
        writer.close()
        status_line = reply.split(b"\r\n", 1)[0]
        assert status_line.startswith(b"HTTP/1.1 401"), (path, reply[:200])
        assert b"X-Request-Id" in reply and b"Traceback" not in reply


@pytest.mark.parametrize("token", ["alice\x00token", "alice\x7ftoken"])
async def test_control_characters_in_a_token_are_401(client, token):
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(
        b"GET /api/v2/whoami HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + f"Authorization: token {token}\r\n\r\n".encode()
    )
    await writer.drain()
    reply = await reader.read()
    writer.close()
    # aiohttp's parser may refuse the header itself (400); never a 500 or a signed-in answer
    assert reply.split(b"\r\n", 1)[0][9:12] in (b"400", b"401"), reply[:200]


@pytest.mark.parametrize("digits", [25, 400, 1000])
async def test_a_huge_integer_in_json_is_422_naming_the_field(client, digits):
    body = b'{"name": "x", "n": ' + b"9" * digits + b"}"
    response = await client.post("/api/v1/echo", data=body)
    assert response.status == 422
    assert (await response.json())["errors"] == ["n"]


async def test_json_that_is_still_broken_after_the_number_fallback_is_400(client):
    for body in (b'{"n": 1e400', b'{"n": NaN}', b'{"name": "\\ud800", "n": 1e999}'):
        response = await client.post("/api/v2/echo", data=body)
        assert response.status == 400, body
        assert (await response.json())["error"]["code"] == "ValInvalidInput"


async def test_every_response_says_nosniff(client):
    for method, path in [("GET", "/api/v2/whoami"), ("GET", "/nothing"), ("GET", "/api/v2/boom")]:
        response = await client.request(method, path)
        assert response.headers["X-Content-Type-Options"] == "nosniff", (method, path)


async def _raw(client, request: bytes, *, close: bool = False) -> bytes:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(request)
    await writer.drain()
    if close:
        writer.close()
        await writer.wait_closed()
        return b""
    # the head and the declared body; not EOF: aiohttp lingers to drain an unread body
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    reply = head + await asyncio.wait_for(reader.readexactly(length), 10)
    writer.close()
    await writer.wait_closed()
    return reply


async def test_a_body_stalled_after_its_headers_is_408_within_the_deadline(client, caplog):
    head = b"POST /api/v2/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
    started = asyncio.get_running_loop().time()
    with caplog.at_level(logging.INFO):
        reply = await _raw(client, head)
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b'"RequestTimeout"' in reply and b"X-Request-Id" in reply
    assert asyncio.get_running_loop().time() - started < 5
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_body_cut_short_by_the_client_logs_one_line_and_no_traceback(client, caplog):
    head = b"POST /api/v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
    with caplog.at_level(logging.INFO):
        await _raw(client, head, close=True)
        await asyncio.sleep(0.3)
        assert (await client.get("/api/v1/whoami")).status == 200  # still serving
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_streaming_handler_reads_its_own_body_beyond_the_json_limit(client):
    response = await client.post("/api/v2/count", data=b"x" * 100_000)
    assert response.status == 200
    assert await response.json() == {"bytes": 100_000}
