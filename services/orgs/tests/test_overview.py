"""docs/orgs.md "Endpoints": GET /orgs/{org}/overview — organization, pins, groups, at most 12
public members (Limits), the total public member count and stats in one response."""

from __future__ import annotations


async def test_overview_returns_everything_in_one_response(ro_api):
    reply = await ro_api.get("/orgs/pub/overview", as_="owner")
    assert reply.status == 200
    body = reply.json
    assert set(body) == {
        "organization",
        "pinned_repos",
        "pinned_groups",
        "public_members",
        "total_members",
        "stats",
    }
    assert body["organization"] == {
        "id": body["organization"]["id"],
        "name": "pub",
        "full_name": "Pub",
        "description": "The public one",
        "website": "",
        "location": "",
        "avatar_url": "http://forge.test/avatars/pub",
        "visibility": "public",
    }
    pinned = await ro_api.get("/orgs/pub/pinned", as_="owner")
    groups = await ro_api.get("/orgs/pub/pinned/groups", as_="owner")
    assert body["pinned_repos"] == pinned.json
    assert body["pinned_groups"] == groups.json


async def test_overview_of_unknown_org_is_404(ro_api):
    assert (await ro_api.get("/orgs/nobody/overview")).status == 404
    assert (await ro_api.get("/orgs/olive/overview")).status == 404


async def test_overview_org_name_is_case_insensitive(ro_api):
    reply = await ro_api.get("/orgs/PUB/overview")
    assert reply.status == 200 and reply.json["organization"]["name"] == "pub"


async def test_overview_at_most_12_public_members_and_total_counts_all_public(api, ids, db):
    await db.execute(
        """WITH u AS (INSERT INTO core.accounts (kind, name)
                      SELECT 'user', 'p' || lpad(g::text, 2, '0') FROM generate_series(1, 20) g
                      RETURNING id, name)
           INSERT INTO core.org_members (org_id, user_id, public)
           SELECT $1, id, name <= 'p15' FROM u""",
        ids.accounts["pub"],
    )
    body = (await api.get("/orgs/pub/overview")).json
    members = [m["user"]["login"] for m in body["public_members"]]
    assert len(members) == 12
    assert members == ["mia", "olive", *[f"p{n:02d}" for n in range(1, 11)]]
    assert body["total_members"] == 17  # mia, olive and p01..p15
    assert body["stats"]["member_count"] == 17  # anonymous: public members only
    insider = (await api.get("/orgs/pub/overview", as_="member")).json
    assert insider["stats"]["member_count"] == 23 and insider["total_members"] == 17
