"""Update keys through nginx to the real service processes (docs/access.md "Update keys"): a key
created through the API opens a private repository's update check, the signed URL it hands out
downloads with a request that carries no header at all (as Squirrel's), and neither the key nor
the signature appears in nginx's access log or the services' logs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from forge_testing.loopback import raw
from forge_testing.waiting import until

if TYPE_CHECKING:
    from conftest import Stack  # tests-e2e/conftest.py: the `stack` fixture's type

pytestmark = pytest.mark.e2e

OWNER = {"Authorization": "token keys-owner-token", "Content-Type": "application/json"}
CONTENT = "private bytes for Squirrel"
WORLD = {
    "users": [{"name": "carol", "tokens": ["keys-owner-token"]}],
    "repos": [
        {
            "owner": "carol",
            "name": "secret-app",
            "private": True,
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0-arm64.zip", "content": CONTENT}],
                }
            ],
        }
    ],
}
CHECK = "/api/v2/repos/carol/secret-app/releases/update?version=0.9.0&platform=darwin&arch=arm64"


def _bare_get(port: int, target: str) -> tuple[int, bytes]:
    """GET with nothing but the request line (HTTP/1.0 needs no Host): no header at all."""
    status, _, body = raw(port, f"GET {target} HTTP/1.0\r\n\r\n".encode())
    return status, body


def test_update_key_through_the_proxy_and_never_logged(stack: Stack) -> None:
    created = stack.request(
        "POST", "/api/v2/repos/carol/secret-app/update_keys", OWNER, b'{"name": "squirrel"}'
    )
    assert created.status == 201, created.body
    key = created.json()["key"]

    assert stack.get(CHECK).status == 401  # without the key, as before
    status, body = _bare_get(stack.nginx_port, f"{CHECK}&key={quote(key)}")
    assert status == 200, body
    url = json.loads(body)["url"]
    assert url.startswith(stack.base_url)
    signature = parse_qs(urlsplit(url).query)["signature"][0]
    status, body = _bare_get(stack.nginx_port, url.removeprefix(stack.base_url[:-1]))
    assert (status, body) == (200, CONTENT.encode())
    assert _bare_get(stack.nginx_port, f"{CHECK}&key=forge_uk_not-a-key")[0] == 404

    access_log = stack.processes[-1].access_log  # nginx's
    assert access_log is not None
    # the access log is flushed every second
    until(lambda: access_log.read_text().count("?[redacted]") >= 3, 10, access_log.read_text, 0.2)
    text = access_log.read_text()
    assert "GET /carol/secret-app/releases/download/v1.0.0/App-1.0.0-arm64.zip?[redacted]" in text
    assert "GET /api/v2/repos/carol/secret-app/releases/update?version=0.9.0" in text  # no key
    logs = [text, *(p.log.read_text(errors="replace") for p in stack.processes)]
    for secret in (key, signature, "forge_uk_not-a-key", quote(key)):
        assert not any(secret in log for log in logs), secret
