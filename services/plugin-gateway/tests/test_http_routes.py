"""Plugin HTTP routes through HandleHTTP (docs/plugins.md "HTTP proxying"):
only declared routes, the header rules both ways, body caps, and how plugin failures look."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest
from plugin.v1 import plugin_pb2

ROUTES = [
    ("GET", "/items"),
    ("POST", "/items"),
    ("DELETE", "/items/1"),
    ("POST", "/echo"),
    ("GET", "/echo"),
]
GENERIC_502 = {"message": "The plugin could not handle the request"}


@pytest.fixture
async def echo(gateway: Any, fakes: Any, helpers: Any) -> tuple[Any, Any]:
    """(client, fake): a plugin that echoes what it received as JSON."""
    fake = await fakes(helpers.FakePlugin("echo", routes=ROUTES))
    client = await gateway([helpers.entry(fake)])
    return client, fake


async def received(response: Any) -> dict[str, Any]:
    assert response.status == 200, await response.text()
    data: dict[str, Any] = json.loads(await response.text())
    return data


# Which requests reach the plugin ---------------------------------------------------------------


async def test_unknown_plugin_is_404(echo: tuple[Any, Any]) -> None:
    client, _ = echo
    response = await client.get("/api/v1/plugins/nope/items")
    assert response.status == 404
    assert await response.json() == {"message": "Plugin not found"}


async def test_path_the_manifest_does_not_declare_is_404(echo: tuple[Any, Any]) -> None:
    client, fake = echo
    for path in (
        "/api/v1/plugins/echo/other",
        "/api/v1/plugins/echo/items/",
        "/api/v1/plugins/echo/",
    ):
        assert (await client.get(path)).status == 404, path
    assert fake.calls["HandleHTTP"] == 0


async def test_method_the_manifest_does_not_declare_is_405_with_allow(
    echo: tuple[Any, Any],
) -> None:
    client, fake = echo
    response = await client.put("/api/v1/plugins/echo/items")
    assert response.status == 405
    assert response.headers["Allow"] == "GET, POST"
    response = await client.get("/api/v1/plugins/echo/items/1")
    assert response.status == 405 and response.headers["Allow"] == "DELETE"
    assert fake.calls["HandleHTTP"] == 0


async def test_plugin_name_is_matched_case_insensitively(echo: tuple[Any, Any]) -> None:
    client, _ = echo
    assert (await client.get("/api/v1/plugins/ECHO/echo")).status == 200


async def test_request_is_mapped_to_method_path_query_and_body(echo: tuple[Any, Any]) -> None:
    client, _ = echo
    response = await client.post(
        "/api/v1/plugins/echo/echo?a=1&a=2&b=%20x%2F", data=b"payload \xc3\xa9"
    )
    seen = await received(response)
    assert seen["method"] == "POST"
    assert seen["path"] == "/echo"
    assert seen["query"] == {"a": "1", "b": " x/"}  # decoded; a repeated name keeps the first
    assert seen["body"] == "payload é"


# Inbound headers ------------------------------------------------------------------------------


async def test_inbound_credentials_hop_by_hop_and_forged_identity_are_dropped(
    echo: tuple[Any, Any], gateway_world: Any
) -> None:
    client, _ = echo
    ids = gateway_world.ids
    response = await client.get(
        "/api/v1/plugins/echo/echo",
        headers={
            "Authorization": "token alice-token",
            "Cookie": "session=stolen",
            "Proxy-Authorization": "Basic Zm9vOmJhcg==",
            "Connection": "keep-alive, X-Hop-Secret",
            "X-Hop-Secret": "hop",
            "Keep-Alive": "timeout=5",
            "TE": "trailers",
            "X-Forge-User-Id": "999",
            "X-Forge-User-Login": "root",
            "X-Forge-User-Admin": "true",
            "X-Forge-Anything": "x",
            "X-Remote-User": "root",
            "X-Webauth-User": "root",
            "X-Forwarded-User": "root",
            "X-Custom": "kept",
            "Accept": "application/json",
        },
    )
    headers = (await received(response))["headers"]
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in (
        "authorization",
        "cookie",
        "proxy-authorization",
        "connection",
        "x-hop-secret",
        "keep-alive",
        "te",
        "x-forge-anything",
        "x-remote-user",
        "x-webauth-user",
        "x-forwarded-user",
    ):
        assert name not in lowered, name
    # The verified caller, in our own headers.
    assert headers["X-Forge-User-Id"] == str(ids.accounts["alice"])
    assert headers["X-Forge-User-Login"] == "alice"
    assert headers["X-Forge-User-Admin"] == "false"
    assert headers["X-Custom"] == "kept"
    assert headers["Accept"] == "application/json"


async def test_anonymous_caller_has_no_identity_headers_even_if_it_sends_some(
    echo: tuple[Any, Any],
) -> None:
    client, _ = echo
    response = await client.get(
        "/api/v1/plugins/echo/echo",
        headers={
            "X-Forge-User-Id": "1",
            "x-forge-user-login": "root",
            "X-FORGE-USER-ADMIN": "true",
        },
    )
    headers = (await received(response))["headers"]
    assert not [k for k in headers if k.lower().startswith("x-forge-")]


async def test_site_admin_is_marked_admin(echo: tuple[Any, Any], gateway_world: Any) -> None:
    client, _ = echo
    ids = gateway_world.ids
    response = await client.get(
        "/api/v1/plugins/echo/echo", headers={"Authorization": "Bearer root-token"}
    )
    headers = (await received(response))["headers"]
    assert headers["X-Forge-User-Id"] == str(ids.accounts["root"])
    assert headers["X-Forge-User-Admin"] == "true"


async def test_unknown_token_is_401_and_never_reaches_the_plugin(echo: tuple[Any, Any]) -> None:
    client, fake = echo
    response = await client.get(
        "/api/v1/plugins/echo/echo", headers={"Authorization": "token wrong"}
    )
    assert response.status == 401
    assert fake.calls["HandleHTTP"] == 0


async def test_request_id_is_sent_to_the_plugin_and_back_to_the_caller(
    echo: tuple[Any, Any],
) -> None:
    client, _ = echo
    response = await client.get("/api/v1/plugins/echo/echo", headers={"X-Request-Id": "req-42"})
    assert (await received(response))["headers"]["X-Request-Id"] == "req-42"
    assert response.headers["X-Request-Id"] == "req-42"
    # An id that could inject into logs is replaced, for the plugin as for the caller.
    response = await client.get("/api/v1/plugins/echo/echo", headers={"X-Request-Id": "a b<c>"})
    sent = (await received(response))["headers"]["X-Request-Id"]
    assert sent != "a b<c>" and sent == response.headers["X-Request-Id"]


# Outbound ------------------------------------------------------------------------------------


async def test_outbound_set_cookie_and_hop_by_hop_are_dropped(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("out", routes=[("GET", "/x")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        return plugin_pb2.HTTPResponse(
            status_code=201,
            headers={
                "Set-Cookie": "session=evil; Path=/",
                "set-cookie2": "legacy=1",
                "Connection": "close, X-Private",
                "X-Private": "internal",
                "Transfer-Encoding": "chunked",
                "Keep-Alive": "timeout=1",
                "Upgrade": "h2c",
                "Content-Length": "999",
                "X-Split": "a\r\nSet-Cookie: injected=1",
                "Content-Type": "text/plain; charset=utf-8",
                "X-Plugin": "yes",
                "Cache-Control": "no-store",
                "X-Huge": "h" * 5000,
                "X-Name": "café 😀",
            },
            body=b"created",
        )

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    response = await client.get("/api/v1/plugins/out/x")
    assert response.status == 201
    assert await response.read() == b"created"
    assert response.headers["X-Plugin"] == "yes"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["Content-Length"] == "7"
    assert response.headers["X-Name"] == "café 😀"
    for name in (
        "Set-Cookie",
        "Set-Cookie2",
        "X-Private",
        "Transfer-Encoding",
        "Keep-Alive",
        "Upgrade",
        "X-Split",
        "X-Huge",
    ):
        assert name not in response.headers, name
    assert "injected" not in str(response.headers)


@pytest.mark.parametrize("status", [0, 1, 99, 100, 101, 199, 600, 999, -200, 2**31 - 1])
async def test_status_outside_the_final_range_is_502(
    gateway: Any, fakes: Any, helpers: Any, status: int
) -> None:
    """Outside 100-599 (and 1xx, which cannot be a final answer) the caller gets 502."""
    fake = helpers.FakePlugin("weird", routes=[("GET", "/x")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        return plugin_pb2.HTTPResponse(status_code=status, body=b"odd")

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    response = await client.get("/api/v1/plugins/weird/x")
    assert response.status == 502
    assert await response.json() == GENERIC_502


@pytest.mark.parametrize("status", [200, 204, 304, 404, 418, 500, 503, 599])
async def test_status_in_range_is_passed_through(
    gateway: Any, fakes: Any, helpers: Any, status: int
) -> None:
    fake = helpers.FakePlugin("plain", routes=[("GET", "/x")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        return plugin_pb2.HTTPResponse(status_code=status, body=b"text")

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    response = await client.get("/api/v1/plugins/plain/x")
    assert response.status == status
    assert await response.read() == (b"" if status in (204, 304) else b"text")


# Body caps ----------------------------------------------------------------------------------


async def test_request_body_over_the_cap_is_413_and_not_sent(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = await fakes(helpers.FakePlugin("small", routes=[("POST", "/up")]))
    options = replace(helpers.FAST, max_http_body_bytes=1024)
    client = await gateway([helpers.entry(fake)], options)
    response = await client.post("/api/v1/plugins/small/up", data=b"x" * 1025)
    assert response.status == 413

    async def chunks() -> Any:
        for _ in range(5):
            yield b"y" * 300

    response = await client.post("/api/v1/plugins/small/up", data=chunks())  # chunked, no length
    assert response.status == 413
    assert fake.calls["HandleHTTP"] == 0
    fake.http = lambda request: _reply(len(request.body))
    response = await client.post("/api/v1/plugins/small/up", data=b"x" * 1024)
    assert response.status == 200 and await response.read() == b"1024"


async def _reply(size: int) -> plugin_pb2.HTTPResponse:
    return plugin_pb2.HTTPResponse(status_code=200, body=str(size).encode())


async def test_response_body_over_the_cap_is_502(gateway: Any, fakes: Any, helpers: Any) -> None:
    fake = helpers.FakePlugin("big", routes=[("GET", "/x")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        return plugin_pb2.HTTPResponse(status_code=200, body=b"z" * 2048)

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)], replace(helpers.FAST, max_http_body_bytes=1024))
    response = await client.get("/api/v1/plugins/big/x")
    assert response.status == 502 and await response.json() == GENERIC_502


async def test_oversize_reply_beyond_the_message_limit_is_502_and_the_plugin_stays_usable(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("huge", routes=[("GET", "/big"), ("GET", "/small")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        size = 300 * 1024 if request.path == "/big" else 10
        return plugin_pb2.HTTPResponse(status_code=200, body=b"q" * size)

    fake.http = answer
    await fakes(fake)
    options = replace(helpers.FAST, max_message_bytes=256 * 1024, max_http_body_bytes=200 * 1024)
    client = await gateway([helpers.entry(fake)], options)
    response = await client.get("/api/v1/plugins/huge/big")
    assert response.status == 502 and await response.json() == GENERIC_502
    assert fake.calls["HandleHTTP"] == 1
    assert (await client.get("/api/v1/plugins/huge/small")).status == 200


# Plugin failures ----------------------------------------------------------------------------


async def test_crashing_handler_is_502_without_the_plugin_error_text(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("crashy", routes=[("GET", "/x")])

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        raise RuntimeError("db password is hunter2 at /srv/secret.conf")

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    response = await client.get("/api/v1/plugins/crashy/x")
    assert response.status == 502
    text = await response.text()
    assert "hunter2" not in text and "RuntimeError" not in text and "secret" not in text
    assert json.loads(text) == GENERIC_502


async def test_missing_handle_http_rpc_is_502(gateway: Any, fakes: Any, helpers: Any) -> None:
    fake = await fakes(helpers.FakePlugin("mute", missing={"HandleHTTP"}))
    client = await gateway([helpers.entry(fake)])
    response = await client.get("/api/v1/plugins/mute/hello")
    assert response.status == 502
    assert "UNIMPLEMENTED" not in await response.text()


@pytest.mark.alone  # measures time: run after the parallel tests
async def test_slow_plugin_is_504_at_the_deadline(gateway: Any, fakes: Any, helpers: Any) -> None:
    fake = helpers.FakePlugin("slow", routes=[("GET", "/x")])
    fake.delay = 2.0
    await fakes(fake)
    client = await gateway([helpers.entry(fake, timeouts={"HandleHTTP": 0.2})])
    started = asyncio.get_running_loop().time()
    response = await client.get("/api/v1/plugins/slow/x")
    elapsed = asyncio.get_running_loop().time() - started
    assert response.status == 504
    assert await response.json() == {"message": "The plugin did not answer in time"}
    assert 0.2 <= elapsed < 1.5


async def test_plugin_dying_mid_request_is_503_with_retry_after(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("dying", routes=[("GET", "/x")])
    fake.delay = 5.0
    await fakes(fake)
    client = await gateway([helpers.entry(fake, timeouts={"HandleHTTP": 3.0})])
    request = asyncio.create_task(client.get("/api/v1/plugins/dying/x"))
    await helpers.eventually(lambda: fake.calls["HandleHTTP"] == 1)
    await fake.stop(0)
    response = await asyncio.wait_for(request, 3)
    # gRPC reports the dropped connection as UNAVAILABLE: the plugin is down.
    assert response.status == 503 and int(response.headers["Retry-After"]) >= 1
    assert await response.json() == {"message": "Plugin unavailable"}
    plugin = helpers.managed(client, "dying")
    await helpers.eventually(lambda: plugin.state == "down", what="the plugin marked down")
    response = await client.get("/api/v1/plugins/dying/x")
    assert response.status == 503 and int(response.headers["Retry-After"]) >= 1


async def test_failing_calls_open_the_breaker_then_a_health_probe_closes_it(
    gateway: Any, fakes: Any, helpers: Any
) -> None:
    fake = helpers.FakePlugin("flaky", routes=[("GET", "/x")])
    failing = True

    async def answer(request: plugin_pb2.HTTPRequest) -> plugin_pb2.HTTPResponse:
        if failing:
            raise RuntimeError("boom")
        return plugin_pb2.HTTPResponse(status_code=200, body=b"ok")

    fake.http = answer
    await fakes(fake)
    client = await gateway([helpers.entry(fake)])
    for _ in range(3):  # FAST: min_calls 3, failure rate 0.5
        assert (await client.get("/api/v1/plugins/flaky/x")).status == 502
    response = await client.get("/api/v1/plugins/flaky/x")
    assert response.status == 503 and int(response.headers["Retry-After"]) >= 1
    assert fake.calls["HandleHTTP"] == 3  # the open circuit answered without calling
    failing = False
    plugin = helpers.managed(client, "flaky")
    await helpers.eventually(lambda: plugin.breaker.allows_calls(), what="half-open probe")
    response = await client.get("/api/v1/plugins/flaky/x")
    assert response.status == 200 and await response.read() == b"ok"


async def test_bytes_that_are_not_utf8_never_fail_the_request(echo: tuple[Any, Any]) -> None:
    """Protobuf strings are UTF-8; a header value or query the client sent as other bytes
    reaches the plugin with U+FFFD instead of failing with 500."""
    client, _ = echo
    raw = (
        b"GET /api/v1/plugins/echo/echo?q=%FF%FE&%C3%28=1 HTTP/1.1\r\n"
        b"Host: forge.test\r\nX-Bad: \xff\xfe ok\r\nConnection: close\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    try:
        writer.write(raw)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    seen = json.loads(body)
    assert seen["headers"]["X-Bad"] == "\ufffd\ufffd ok"
    assert seen["query"] == {"q": "\ufffd\ufffd", "\ufffd(": "1"}
