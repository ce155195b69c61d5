"""`forge serve`'s runner (forge_common.serving), on a real socket with raw bytes: what aiohttp's
parser refuses and a refused `Expect` header get our JSON error body with a request id, and the
log never carries a header's value (docs/http.md "Errors", "Request ids")."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from forge_common.app import create_app
from forge_common.render import json_response
from forge_common.service import Service
from forge_common.serving import refused_path
from forge_testing.server import ForgeTestServer

SECRET_TOKEN = "s3cr3t-token-value"


async def echo(request: web.Request) -> web.Response:
    return json_response({"bytes": len(await request.read())})


def setup(app: web.Application, settings: object) -> None:
    for prefix in ("/api/v1", "/api/v2"):
        app.router.add_post(f"{prefix}/echo", echo)


@pytest.fixture
async def server(settings):
    app = create_app(settings, [Service("t", None, None, setup)])
    async with ForgeTestServer(app) as test_server:
        yield test_server


async def _exchange(server: TestServer, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(raw)
    await writer.drain()
    reply = await asyncio.wait_for(reader.read(), 10)  # every refusal closes the connection
    writer.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _assert_json_error(status: int, headers: dict[str, str], body: bytes, *, v1: bool) -> None:
    assert headers["content-type"].startswith("application/json")
    assert headers["x-content-type-options"] == "nosniff"
    request_id = headers["x-request-id"]
    assert len(request_id) == 32
    document = json.loads(body)
    if v1:
        assert set(document) == {"message"}
    else:
        assert document["error"]["status"] == status
        assert document["error"]["request_id"] == request_id


def _auth(path: str, extra: bytes) -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: token {SECRET_TOKEN}\r\n".encode()
        + extra
    )


MALFORMED = {
    "bad byte in a header name": b"Bad\x01Name: v\r\n\r\n",
    "header over 8190 bytes": b"X-Big: " + b"a" * 9000 + b"\r\n\r\n",
    "folded header": b"X-Folded: one\r\n two\r\n\r\n",
    "control byte in a header value": b"X-Ctl: a\x00b\r\n\r\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("path", ["/api/v2/echo", "/api/v1/echo", "/anything"])
async def test_what_the_parser_refuses_is_our_json_400_and_logs_no_header_value(
    server, caplog, case, path
):
    caplog.set_level(logging.DEBUG)
    status, headers, body = await _exchange(server, _auth(path, MALFORMED[case]))
    assert status == 400
    _assert_json_error(status, headers, body, v1=path.startswith("/api/v1/"))
    if not path.startswith("/api/v1/"):
        assert json.loads(body)["error"]["code"] == "ValInvalidInput"
    records = [r for r in caplog.records if r.name.startswith(("aiohttp", "forge_common"))]
    assert [r.levelname for r in records] == ["WARNING"], [r.getMessage() for r in records]
    (record,) = records
    assert record.exc_info is None and "\n" not in record.getMessage()
    logged = record.getMessage() + caplog.text
    assert SECRET_TOKEN not in logged and "aaaa" not in logged and "Folded" not in logged


async def test_a_bad_request_line_is_our_json_400(server, caplog):
    status, headers, body = await _exchange(
        server, b"GET /api/v1/\x01x HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert status == 400
    _assert_json_error(status, headers, body, v1=True)


def test_the_refused_path_is_the_last_request_line_received():
    assert refused_path(b"GET /api/v1/orgs/a HTTP/1.1\r\nX: \x01\r\n") == "/api/v1/orgs/a"
    pipelined = b"GET /a HTTP/1.1\r\n\r\nPOST /api/v1/b HTTP/1.1\r\nBad\x01: x"
    assert refused_path(pipelined) == "/api/v1/b"
    assert refused_path(b"\x16\x03\x01 TLS hello") == "/"


@pytest.mark.parametrize("path", ["/api/v2/echo", "/api/v1/echo", "/nowhere"])
async def test_a_bogus_expect_header_is_our_json_417(server, path):
    raw = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nX-Request-Id: mine-1\r\n"
        "Content-Length: 2\r\n\r\n{}"
    ).encode()
    status, headers, body = await _exchange(server, raw)
    assert status == 417
    assert headers["x-request-id"] == "mine-1"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-type"].startswith("application/json")
    document = json.loads(body)
    if path.startswith("/api/v1/"):
        assert document == {"message": "Expectation Failed"}
    else:
        assert document["error"] == {
            "code": "HTTPError",
            "message": "Expectation Failed",
            "status": 417,
            "request_id": "mine-1",
        }


async def test_expect_100_continue_still_continues(server):
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(
        b"POST /api/v2/echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        b"Content-Length: 3\r\nConnection: close\r\n\r\n"
    )
    await writer.drain()
    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert interim.startswith(b"HTTP/1.1 100 Continue")
    writer.write(b"abc")
    reply = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b'{"bytes":3}')
