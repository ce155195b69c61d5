"""docs/orgs.md "Decisions": GET responses carry a per-viewer ETag (304 on If-None-Match),
`Cache-Control: private` and `Vary: Authorization`."""

from __future__ import annotations

import pytest

GETS = ("overview", "pinned", "pinned/groups", "public_members/roles")


@pytest.mark.parametrize("path", GETS)
async def test_get_carries_etag_cache_control_private_and_vary_authorization(ro_api, path):
    reply = await ro_api.get(f"/orgs/pub/{path}", as_="member")
    assert reply.status == 200
    assert reply.headers["Cache-Control"] == "private"
    assert reply.headers["Vary"] == "Authorization"
    etag = reply.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = await ro_api.get(f"/orgs/pub/{path}", as_="member", headers={"If-None-Match": etag})
    assert again.status == 304 and again.raw == b""
    assert again.headers["ETag"] == etag and again.headers["Cache-Control"] == "private"
    for header in (f"W/{etag}", f'"other", {etag}', "*"):
        reply = await ro_api.get(
            f"/orgs/pub/{path}", as_="member", headers={"If-None-Match": header}
        )
        assert reply.status == 304, header


async def test_etag_is_per_viewer_even_when_bodies_are_equal(ro_api):
    anonymous = await ro_api.get("/orgs/pub/pinned")
    stranger = await ro_api.get("/orgs/pub/pinned", as_="stranger")
    assert anonymous.raw == stranger.raw
    assert anonymous.headers["ETag"] != stranger.headers["ETag"]
    reply = await ro_api.get(
        "/orgs/pub/pinned", as_="stranger", headers={"If-None-Match": anonymous.headers["ETag"]}
    )
    assert reply.status == 200


async def test_stale_etag_gets_the_new_body_after_a_change(api, ids):
    first = await api.get("/orgs/pub/pinned", as_="owner")
    await api.delete("/orgs/pub/pinned/open", as_="owner")
    reply = await api.get(
        "/orgs/pub/pinned", as_="owner", headers={"If-None-Match": first.headers["ETag"]}
    )
    assert reply.status == 200 and reply.headers["ETag"] != first.headers["ETag"]
