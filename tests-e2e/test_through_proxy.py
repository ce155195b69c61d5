"""Through nginx (deploy/nginx/forge.conf.template) to the three real service processes.

docs/architecture.md "Routing by the reverse proxy": /api/v2/ and downloads reach releases,
/api/v1/orgs/ reaches orgs, /api/v1/plugins/ and /api/v1/admin/plugins reach the gateway,
/internal/ is never routed and anything else is a JSON 404. docs/http.md "Request ids": every
response carries X-Request-Id.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from forge_testing.waiting import until

if TYPE_CHECKING:
    from conftest import Stack  # tests-e2e/conftest.py: the `stack` fixture's type

pytestmark = pytest.mark.e2e

ALICE = {"Authorization": "token alice-e2e-token"}  # site admin
BOB = {"Authorization": "token bob-e2e-token"}  # owner of acme, not a site admin
BIG_ASSET = "App-1.2.0-x86_64.AppImage"
BIG_SIZE = 300_000  # larger than nginx's in-memory proxy buffers: exercises streaming

# Loaded with `forge load` by the module's `stack` fixture (tests-e2e/conftest.py).
WORLD = {
    "users": [
        {"name": "alice", "admin": True, "tokens": ["alice-e2e-token"]},
        {"name": "bob", "tokens": ["bob-e2e-token"]},
    ],
    "orgs": [
        {
            "name": "acme",
            "full_name": "Acme",
            "visibility": "public",
            "members": [{"user": "bob", "owner": True, "public": True}],
            "pin_groups": [{"name": "Featured", "display_order": 0}],
            "pins": [{"repo": "app", "group": "Featured", "display_order": 1}],
        }
    ],
    "repos": [
        {
            "owner": "acme",
            "name": "app",
            "releases": [
                {
                    "tag": "v1.0.0",
                    "created_at": "2026-01-01T00:00:00Z",
                    "assets": [{"name": "App-1.0.0-x86_64.AppImage", "size": 1000}],
                },
                {
                    "tag": "v1.2.0",
                    "title": "1.2.0",
                    "note": "Fixes",
                    "created_at": "2026-01-02T03:04:05Z",
                    "assets": [
                        {"name": BIG_ASSET, "size": BIG_SIZE},
                        {"name": "RELEASES", "content": "ABC App-1.2.0-full.nupkg 10\n"},
                    ],
                },
            ],
        }
    ],
}


def _v2_error(body: bytes) -> dict[str, object]:
    error = json.loads(body)["error"]
    assert isinstance(error, dict)
    return error


# --- releases --------------------------------------------------------------------------------


def test_release_list_goes_to_releases_newest_first(stack: Stack) -> None:
    reply = stack.get("/api/v2/repos/acme/app/releases")
    assert reply.status == 200, reply.body
    releases = reply.json()
    assert [r["tag_name"] for r in releases] == ["v1.2.0", "v1.0.0"]
    # The API hands out the proxy's public address (APP_URL) for downloads.
    urls = [a["browser_download_url"] for a in releases[0]["assets"]]
    assert urls[0] == f"{stack.base_url}acme/app/releases/download/v1.2.0/{BIG_ASSET}"


def test_update_check_goes_to_releases_and_its_url_downloads_through_the_proxy(
    stack: Stack,
) -> None:
    """Update rules 4 and 8 end to end: the newer release's matching asset, whose URL works."""
    reply = stack.get(
        "/api/v2/repos/acme/app/releases/update?version=1.0.0&platform=linux&arch=x64"
    )
    assert reply.status == 200, reply.body
    update = reply.json()
    assert update["name"] == "v1.2.0"
    assert update["platform"]["size"] == BIG_SIZE
    url = update["url"]
    assert url.startswith(stack.base_url)
    download = stack.get("/" + url.removeprefix(stack.base_url))
    assert download.status == 200
    assert len(download.body) == BIG_SIZE
    assert download.headers["ETag"] == f'"{hashlib.sha256(download.body).hexdigest()}"'


def test_update_check_without_newer_release_is_204_through_the_proxy(stack: Stack) -> None:
    reply = stack.get("/api/v2/repos/acme/app/releases/update?version=1.2.0&platform=linux")
    assert reply.status == 204
    assert reply.body == b""


def test_download_range_and_if_none_match_pass_through(stack: Stack) -> None:
    path = f"/acme/app/releases/download/v1.2.0/{BIG_ASSET}"
    full = stack.get(path)
    assert full.status == 200
    part = stack.get(path, {"Range": "bytes=1000-1999"})
    assert part.status == 206
    assert part.headers["Content-Range"] == f"bytes 1000-1999/{BIG_SIZE}"
    assert part.body == full.body[1000:2000]
    tail = stack.get(path, {"Range": "bytes=-10"})
    assert tail.status == 206
    assert tail.body == full.body[-10:]
    cached = stack.get(path, {"If-None-Match": full.headers["ETag"]})
    assert cached.status == 304
    assert cached.body == b""


def test_latest_download_address_reaches_releases(stack: Stack) -> None:
    reply = stack.get("/acme/app/releases/latest/download/RELEASES")
    assert reply.status == 200
    assert reply.body == b"ABC App-1.2.0-full.nupkg 10\n"


def test_unknown_release_is_the_services_v2_error_with_the_callers_request_id(
    stack: Stack,
) -> None:
    """The id reaches the service (it is in the service's error body) and comes back."""
    reply = stack.get("/api/v2/repos/acme/app/releases/v9.9.9", {"X-Request-Id": "e2e-req-1"})
    assert reply.status == 404
    assert reply.headers.get_all("X-Request-Id") == ["e2e-req-1"]  # once, not nginx's and the app's
    error = _v2_error(reply.body)
    assert error["code"] == "ReleaseNotFound"
    assert error["request_id"] == "e2e-req-1"


# --- orgs and gateway ------------------------------------------------------------------------


def test_org_overview_goes_to_orgs(stack: Stack) -> None:
    reply = stack.get("/api/v1/orgs/acme/overview")
    assert reply.status == 200, reply.body
    overview = reply.json()
    assert overview["organization"]["name"] == "acme"
    assert [p["repo"]["name"] for p in overview["pinned_repos"]] == ["app"]


@pytest.mark.parametrize(
    ("path", "described"),
    [("/api/v1/openapi.json", "/orgs/{org}/overview"), ("/api/v2/openapi.json", "/update")],
)
def test_each_api_document_comes_from_its_service(stack: Stack, path: str, described: str) -> None:
    reply = stack.get(path)
    assert reply.status == 200, reply.body
    document = reply.json()
    assert document["openapi"].startswith("3.1")
    assert any(route.endswith(described) for route in document["paths"])


def test_org_pins_go_to_orgs_and_unknown_org_is_v1_404(stack: Stack) -> None:
    pins = stack.get("/api/v1/orgs/acme/pinned", BOB)
    assert pins.status == 200, pins.body
    assert [p["repo"]["name"] for p in pins.json()] == ["app"]
    missing = stack.get("/api/v1/orgs/no-such-org/overview")
    assert missing.status == 404
    assert "message" in missing.json()


def test_admin_plugins_goes_to_the_gateway(stack: Stack) -> None:
    listing = stack.get("/api/v1/admin/plugins", ALICE)
    assert listing.status == 200, listing.body
    assert [p["name"] for p in listing.json()] == ["event-recorder"]
    assert stack.get("/api/v1/admin/plugins").status == 401
    assert stack.get("/api/v1/admin/plugins", BOB).status == 403


def test_plugin_route_goes_through_the_gateway_to_the_plugin(stack: Stack) -> None:
    """nginx → gateway → gRPC HandleHTTP → event-recorder's GET /health."""
    reply = stack.get("/api/v1/plugins/event-recorder/health")
    assert reply.status == 200, reply.body
    assert reply.json()["status"] == "ok"


def _sockets_on_port(port: int) -> dict[str, int]:
    """Counts of IPv4 TCP sockets with `port` at either end, by state (/proc/net/tcp)."""
    states = {"01": "established", "06": "time_wait"}
    counts = dict.fromkeys(states.values(), 0)
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        ends = {int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)}
        if port in ends and fields[3] in states:
            counts[states[fields[3]]] += 1
    return counts


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_upstream_connections_are_kept_alive(stack: Stack) -> None:
    """keepalive 64 + HTTP/1.1 + Connection "": 30 requests reuse nginx's upstream connections
    instead of opening and closing 30 (each close would leave a TIME_WAIT socket)."""
    port = stack.ports["releases"]
    before = _sockets_on_port(port)
    for _ in range(30):
        assert stack.get("/api/v2/repos/acme/app/releases").status == 200
    after = _sockets_on_port(port)
    assert after["time_wait"] - before["time_wait"] < 10, (before, after)
    assert after["established"] >= 2  # both ends of at least one idle kept-alive connection


# --- what the proxy itself answers -----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/internal/v1/events",
        "/api/v2/../internal/v1/events",
        "/api/v2/%2e%2e/internal/v1/events",
        "/api/v1/plugins/x/%2e%2e/%2e%2e/%2e%2e/internal/v1/events",
        "/api/v1/plugins/..%2F..%2F..%2Finternal/v1/events",
    ],
)
def test_internal_is_never_routed(stack: Stack, path: str) -> None:
    for method in ("GET", "POST"):
        reply = stack.request(method, path, {"Content-Type": "application/json"}, b"[]")
        assert reply.status == 404, (method, path, reply.body)


def test_internal_events_exist_on_the_gateway_itself(stack: Stack) -> None:
    """Shows the 404 above is the proxy's doing: the gateway does serve the endpoint."""
    reply = stack.direct(
        "gateway", "POST", "/internal/v1/events", body=b"[]", headers={"X-Forge-Secret": "x"}
    )
    assert reply.status != 404


@pytest.mark.parametrize("path", ["/metrics", "/api/v2/../metrics", "/metrics?x=1"])
def test_metrics_are_never_routed(stack: Stack, path: str) -> None:
    """docs/operations.md "Metrics": for the scraper inside the cluster only."""
    assert stack.get(path).status == 404
    for service in ("releases", "orgs", "gateway"):  # while each service does serve them
        reply = stack.direct(service, "GET", "/metrics")
        assert reply.status == 200 and b"forge_http_requests_total" in reply.body


def test_unrouted_paths_are_json_404_from_the_proxy(stack: Stack) -> None:
    # (/, /acme and /acme/app are pages: docs/pages.md; tests-e2e/pages/)
    # (/api/v3/ is the GitHub-shaped release API now: docs/compat.md; /api/v9/ is unrouted)
    # (/ is the start page and /api/v1/users/... Gitea's user API now: docs/accounts.md)
    for path in ("/healthz", "/api/v9/x", "/api/v1/nothing/alice", "/acme/app/wiki"):
        reply = stack.get(path)
        assert reply.status == 404, path
        assert reply.headers["Content-Type"] == "application/json"
        assert reply.headers["Server"] == "nginx"  # no version: server_tokens off
        body = reply.json()
        if path.startswith("/api/v1/"):
            assert body == {"message": "Not found"}
        else:
            assert body["error"]["code"] == "NotFound"
            assert body["error"]["request_id"] == reply.headers["X-Request-Id"]


def test_the_start_page_and_the_sign_in_reach_their_services(stack: Stack) -> None:
    """docs/accounts.md: `/` is the releases service's start page, `/user/...` the orgs
    service's sign-in and settings (never a `/{owner}/{repo}` page), `/{user}` a profile."""
    start = stack.get("/")
    assert start.status == 200 and start.headers["Content-Type"].startswith("text/html")
    assert b"<h1>Forge</h1>" in start.body
    login = stack.get("/user/login")
    assert login.status == 200 and b'name="user_name"' in login.body
    settings = stack.get("/user/settings/applications")
    assert settings.status == 401 and b"redirect_to=/user/settings/applications" in settings.body
    profile = stack.get("/bob")
    assert profile.status == 200 and b">Acme</a>" in profile.body  # a public membership


def _console_pages() -> list[str]:
    """Every page the console's route table serves under a repository, as acme/app's paths."""
    from forge_releases.console.routes import console_routes

    paths = []
    for route in console_routes("/{owner}/{repo}"):
        if route.method == "GET" and route.path.startswith("/{owner}/{repo}"):
            path = route.path.replace("{owner}/{repo}", "acme/app").replace("{tag}", "v1.2.0")
            paths.append(path)
    return paths


@pytest.mark.parametrize("path", _console_pages())
def test_every_console_page_reaches_the_releases_service(stack: Stack, path: str) -> None:
    """A console page that nginx does not route is its JSON 404 for everyone: every GET of the
    console's route table answers the releases service's HTML page through the proxy."""
    reply = stack.get(path, headers=ALICE)
    assert reply.headers["Content-Type"].startswith("text/html"), (path, reply.status)
    assert reply.status != 404, path


def test_compat_roots_answer_json_404_in_the_github_and_gitea_shape(stack: Stack) -> None:
    """docs/compat.md: /api/v3/ and /api/v1/repos/ reach the releases service, whose 404 there is
    the version-1 body, as GitHub's and Gitea's."""
    for path in ("/api/v3/x", "/api/v3/repos/acme/nothing", "/api/v1/repos/acme/nothing"):
        reply = stack.get(path)
        assert reply.status == 404, path
        assert reply.headers["Content-Type"].startswith("application/json"), path
        assert "message" in reply.json() and "error" not in reply.json(), path


def test_request_id_is_generated_when_missing_or_unsafe(stack: Stack) -> None:
    plain = stack.get("/api/v2/repos/acme/app/releases")
    generated = plain.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", generated)
    unsafe = stack.get("/api/v2/repos/acme/app/releases/nope", {"X-Request-Id": "bad id\tx"})
    assert unsafe.headers["X-Request-Id"] != "bad id\tx"
    assert _v2_error(unsafe.body)["request_id"] == unsafe.headers["X-Request-Id"]
    own = str(uuid.uuid4())
    assert (
        stack.get("/api/v1/orgs/acme/overview", {"X-Request-Id": own}).headers["X-Request-Id"]
        == own
    )


def test_json_body_over_one_mebibyte_is_413_json_from_the_proxy(stack: Stack) -> None:
    body = b"{" + b" " * (2 * 1024 * 1024) + b"}"
    reply = stack.request(
        "POST", "/api/v2/repos/acme/app/releases", {"Content-Type": "application/json"}, body
    )
    assert reply.status == 413
    assert _v2_error(reply.body)["code"] == "PayloadTooLarge"


def test_asset_upload_over_one_mebibyte_streams_through_and_downloads_back(
    stack: Stack, tmp_path: Path
) -> None:
    """The asset location lifts nginx's 1 MiB limit (4g) and streams the body to releases."""
    created = stack.request(
        "POST",
        "/api/v2/repos/acme/app/releases",
        {**BOB, "Content-Type": "application/json"},
        json.dumps({"tag_name": "v2.0.0", "name": "2.0.0", "body": "e2e"}).encode(),
    )
    assert created.status == 201, created.body
    release_id = created.json()["id"]
    payload = bytes(range(256)) * (3 * 1024 * 1024 // 256)  # 3 MiB
    boundary = "e2e-boundary"
    form = (
        (
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="attachment"; '
            'filename="App-2.0.0-x86_64.AppImage"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + payload
        + f"\r\n--{boundary}--\r\n".encode()
    )
    uploaded = stack.request(
        "POST",
        f"/api/v2/repos/acme/app/releases/{release_id}/assets?name=App-2.0.0-x86_64.AppImage",
        {**BOB, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        form,
    )
    assert uploaded.status == 201, uploaded.body
    assert uploaded.json()["size"] == len(payload)
    download = stack.get("/acme/app/releases/download/v2.0.0/App-2.0.0-x86_64.AppImage")
    assert download.status == 200
    assert download.body == payload


def test_published_release_reaches_the_plugin_through_relay_and_gateway(stack: Stack) -> None:
    """docs/events.md end to end: releases' outbox → signed POST to the gateway → OnEvent in
    event-recorder, whose recorded events a site admin reads through nginx and the gateway."""
    created = stack.request(
        "POST",
        "/api/v2/repos/acme/app/releases",
        {**BOB, "Content-Type": "application/json"},
        json.dumps({"tag_name": "v3.0.0", "name": "3.0.0", "body": "events"}).encode(),
    )
    assert created.status == 201, created.body
    seen: list[object] = []

    def reached() -> bool:
        nonlocal seen
        reply = stack.get("/api/v1/plugins/event-recorder/events?type=release.published", ALICE)
        assert reply.status == 200, reply.body
        seen = [e["payload"].get("tag") for e in reply.json() if isinstance(e["payload"], dict)]
        return "v3.0.0" in seen

    until(reached, 15, lambda: f"release.published for v3.0.0 in the plugin (saw tags {seen})", 0.1)
