"""docs/release-safety.md "Withdraw": a withdrawn release stops being offered at the speed of a
publish, on every replica behind nginx's micro-cache. Two releases replicas share nginx's upstream
(STACK_REPLICAS); the withdrawal reaches one of them, the other learns it from PostgreSQL's NOTIFY,
and nginx refreshes each kept answer from either of them."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Stack

pytestmark = pytest.mark.e2e

TOKEN = "alice-yank-token"
STACK_REPLICAS = 2  # releases processes behind nginx (tests-e2e/conftest.py)
WORLD = {
    "users": [{"name": "alice", "admin": True, "tokens": [TOKEN]}],
    "orgs": [{"name": "acme", "visibility": "public", "members": [{"user": "alice"}]}],
    "repos": [
        {
            "owner": "acme",
            "name": "yank",
            "releases": [
                {
                    "tag": tag,
                    "created_at": f"2026-01-0{day}T00:00:00Z",
                    "assets": [
                        {"name": f"Yank-{tag[1:]}.AppImage", "size": 1000},
                        {"name": f"Yank-{tag[1:]}-mac.zip", "size": 1000},
                        {"name": f"Yank-x64-{tag[1:]}-full.nupkg", "size": 1000},
                    ],
                }
                for day, tag in ((1, "v1.0.0"), (2, "v2.0.0"))
            ],
        },
    ],
}
YANK = "/api/v2/repos/acme/yank/releases"
# every anonymous way of being offered a release that nginx keeps (docs/operations.md)
YANK_PATHS = (
    f"{YANK}/update?version=1.0.0&platform=linux&arch=x64",
    YANK,
    f"{YANK}/latest",
    "/acme/yank/darwin-x64/1.0.0",
    f"{YANK}/feeds/electron/latest-linux.yml",
    f"{YANK}/feeds/squirrel/x64/RELEASES",
)
REPLICAS = ("releases", "releases-2")


@pytest.mark.alone  # measures time: run after the parallel tests
def test_a_withdrawal_shows_within_one_second_in_every_feed_on_every_replica(stack: Stack) -> None:
    """Every path's answer is kept by nginx and by both replicas when the release is withdrawn
    through nginx; no request that starts 1 s or more after the withdrawal still names it, through
    nginx or from either replica directly."""
    for path in YANK_PATHS:
        for replica in REPLICAS:  # each replica's own kept answer names 2.0.0
            assert b"2.0.0" in stack.direct(replica, "GET", path).body, (replica, path)
        stack.wait_until_cached(path)
        assert b"2.0.0" in stack.get(path).body, path
    release_id = stack.get(f"{YANK}/v2.0.0").json()["id"]
    author = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}
    body = json.dumps({"withdrawn": True, "withdrawn_reason": "crashes"}).encode()
    assert stack.request("PATCH", f"{YANK}/{release_id}", author, body).status == 200
    withdrawn = time.monotonic()
    asks = [(None, path) for path in YANK_PATHS]
    asks += [(replica, path) for replica in REPLICAS for path in YANK_PATHS]
    for replica, path in asks:
        while True:
            asked = time.monotonic() - withdrawn
            reply = stack.get(path) if replica is None else stack.direct(replica, "GET", path)
            if b"2.0.0" not in reply.body:
                break
            where = replica or "nginx"
            assert asked < 1.0, f"{where}: {path} still offers v2.0.0 {asked:.3f} s after"
            time.sleep(0.01)
