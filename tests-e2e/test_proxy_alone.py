"""nginx alone, its upstreams down: what the proxy answers by itself (JSON bodies in the services'
shapes, the request id, Retry-After) when a service is unreachable, e.g. during a restart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "path",
    [
        "/api/v2/repos/acme/app/releases",
        "/acme/app/releases/download/v1.0.0/App.zip",
        "/acme/app/releases/latest/download/RELEASES",
    ],
)
def test_unreachable_releases_is_a_v2_503_with_the_request_id(lone_proxy: Stack, path: str) -> None:
    reply = lone_proxy.get(path, {"X-Request-Id": "down-1"})
    assert reply.status == 503
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.headers["Retry-After"] == "5"
    assert reply.headers.get_all("X-Request-Id") == ["down-1"]
    error = json.loads(reply.body)["error"]
    assert error == {
        "code": "ServiceUnavailable",
        "message": "Service unavailable",
        "status": 503,
        "request_id": "down-1",
    }


@pytest.mark.parametrize(
    "path", ["/api/v1/orgs/acme/overview", "/api/v1/plugins/x/y", "/api/v1/admin/plugins"]
)
def test_unreachable_v1_service_is_a_v1_503(lone_proxy: Stack, path: str) -> None:
    reply = lone_proxy.get(path)
    assert reply.status == 503
    assert json.loads(reply.body) == {"message": "Service unavailable"}
    assert reply.headers["X-Request-Id"]


def test_routing_decisions_need_no_upstream(lone_proxy: Stack) -> None:
    """404 for unrouted and /internal/ paths, 413 over 1 MiB: answered by nginx itself."""
    assert lone_proxy.get("/internal/v1/events").status == 404
    assert lone_proxy.get("/api/v1/nothing").status == 404  # (/api/v1/users/ is Gitea's now)
    too_big = lone_proxy.request(
        "PUT", "/api/v1/orgs/acme/pinned/reorder", {}, b"x" * (1024 * 1024 + 1)
    )
    assert too_big.status == 413
    assert json.loads(too_big.body) == {"message": "Request body too large"}
    # The asset upload location accepts more than 1 MiB (it then fails to reach releases).
    upload = lone_proxy.request(
        "POST", "/api/v2/repos/acme/app/releases/1/assets", {}, b"x" * (2 * 1024 * 1024)
    )
    assert upload.status == 503
