"""HandleHTTP: request parsing, caller identity and response conversion."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from forge_plugin_sdk import Caller, Headers, Request, Response
from forge_plugin_sdk.http import to_response
from plugin.v1 import plugin_pb2

TIMEOUT = 10.0


async def test_identity_headers_reach_the_handler(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(
            method="get",
            path="/echo",
            headers={
                "X-Forge-User-Id": "42",
                "X-Forge-User-Login": "alice",
                "X-Forge-User-Admin": "true",
                "X-Request-Id": "req-1",
                "content-type": "text/plain",
            },
            query_params={"page": "2"},
            body=b"hello",
        ),
        timeout=TIMEOUT,
    )
    assert response.status_code == 200
    assert json.loads(response.body) == {
        "method": "GET",
        "path": "/echo",
        "query": {"page": "2"},
        "body": "hello",
        "user_id": 42,
        "login": "alice",
        "admin": True,
        "anonymous": False,
        "request_id": "req-1",
        "content_type": "text/plain",
    }


async def test_anonymous_caller(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="GET", path="/echo"), timeout=TIMEOUT
    )
    body = json.loads(response.body)
    assert body["anonymous"] is True
    assert (body["user_id"], body["login"], body["admin"]) == (None, None, False)


async def test_response_object_keeps_status_headers_body(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="POST", path="/echo", body=b'{"a":1}'), timeout=TIMEOUT
    )
    assert response.status_code == 201
    assert response.headers["X-Seen"] == "1"
    assert response.body == b'{"a":1}'


async def test_bytes_become_octet_stream(stub):
    response = await stub.HandleHTTP(
        plugin_pb2.HTTPRequest(method="GET", path="/bytes"), timeout=TIMEOUT
    )
    assert response.headers["Content-Type"] == "application/octet-stream"
    assert response.body == b"\x00\x01"


def test_headers_ignore_case():
    headers = Headers({"X-Forge-User-Id": "7"})
    assert headers["x-forge-user-id"] == "7"
    assert "X-FORGE-USER-ID" in headers
    assert list(headers) == ["X-Forge-User-Id"]


def test_malformed_user_id_is_anonymous():
    assert Caller.from_headers(Headers({"X-Forge-User-Id": "abc"})).anonymous


def test_to_response_conversions():
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert json.loads(to_response({"at": when}).body) == {"at": "2026-01-02T03:04:05Z"}
    assert to_response([1, 2]).body == b"[1,2]"
    assert to_response("hi").headers["Content-Type"].startswith("text/plain")
    with pytest.raises(TypeError):
        to_response(3)  # type: ignore[arg-type]


def test_status_outside_range_is_refused():
    with pytest.raises(ValueError, match="outside"):
        Response(status=700).to_proto()


def test_request_json():
    request = Request.from_proto(plugin_pb2.HTTPRequest(method="POST", path="/", body=b'{"x": 1}'))
    assert request.json() == {"x": 1}
