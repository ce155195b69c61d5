"""docs/orgs.md "Endpoints": GET /orgs/{org}/public_members/roles and PUT/DELETE
/orgs/{org}/public_members/{username} with the three rules in the spec's order; anonymous
callers 401 (docs/orgs.md)."""

from __future__ import annotations

import pytest

ONLY_YOUR_OWN = "You can only change your own public membership visibility"


async def logins(api, org="pub", viewer="owner"):
    return [
        m["user"]["login"]
        for m in (await api.get(f"/orgs/{org}/public_members/roles", as_=viewer)).json
    ]


async def test_roles_lists_every_public_member_with_role_and_total_count_header(ro_api):
    reply = await ro_api.get("/orgs/pub/public_members/roles")
    assert reply.status == 200
    assert [(m["user"]["login"], m["role"]) for m in reply.json] == [
        ("mia", "member"),
        ("olive", "owner"),
    ]
    assert reply.headers["X-Total-Count"] == "2"
    assert "X-Total-Count" in reply.headers["Access-Control-Expose-Headers"]
    user = reply.json[0]["user"]
    assert user["html_url"] == "http://forge.test/mia" and user["full_name"] == "Mia"
    assert "email" not in user


async def test_roles_page_and_limit_are_accepted_and_ignored(ro_api):
    full = await ro_api.get("/orgs/pub/public_members/roles")
    for query in (
        "?page=2&limit=1",
        "?page=-1&limit=0",
        "?page=x&limit=y",
        "?limit=99999999999999999999",
    ):
        reply = await ro_api.get("/orgs/pub/public_members/roles" + query)
        assert reply.status == 200 and reply.json == full.json
        assert reply.headers["X-Total-Count"] == "2"


async def test_roles_of_unknown_org_is_404(ro_api):
    assert (await ro_api.get("/orgs/nobody/public_members/roles")).status == 404


async def test_roles_returns_all_public_members_beyond_any_page_size(api, ids, db):
    await db.execute(
        """WITH u AS (INSERT INTO core.accounts (kind, name)
                      SELECT 'user', 'm' || lpad(g::text, 3, '0') FROM generate_series(1, 120) g
                      RETURNING id)
           INSERT INTO core.org_members (org_id, user_id, public) SELECT $1, id, true FROM u""",
        ids.accounts["pub"],
    )
    reply = await api.get("/orgs/pub/public_members/roles?limit=10")
    assert len(reply.json) == 122 and reply.headers["X-Total-Count"] == "122"
    names = [m["user"]["login"] for m in reply.json]
    assert names == sorted(names, key=str.lower)


async def test_publicize_own_membership_204(api, ids):
    reply = await api.put("/orgs/pub/public_members/cora", as_="concealed")
    assert reply.status == 204 and reply.raw == b""
    assert "cora" in await logins(api)


async def test_conceal_own_membership_204(api, ids):
    reply = await api.delete("/orgs/pub/public_members/MIA", as_="member")
    assert reply.status == 204
    assert "mia" not in await logins(api)


async def test_owner_may_change_another_members_visibility(api, ids):
    assert (await api.put("/orgs/pub/public_members/cora", as_="owner")).status == 204
    assert (await api.delete("/orgs/pub/public_members/mia", as_="owner")).status == 204
    assert await logins(api) == ["cora", "olive"]


async def test_rule_1_non_owner_changing_another_users_visibility_is_403(ro_api):
    for method in ("put", "delete"):
        reply = await getattr(ro_api, method)("/orgs/pub/public_members/cora", as_="member")
        assert reply.status == 403 and reply.json["message"] == ONLY_YOUR_OWN
    assert "cora" not in await logins(ro_api)


async def test_rule_1_site_admin_who_is_not_an_owner_is_403(ro_api):
    reply = await ro_api.put("/orgs/pub/public_members/cora", as_="admin")
    assert reply.status == 403 and reply.json["message"] == ONLY_YOUR_OWN


async def test_rule_1_comes_before_rule_2_unknown_user_by_non_owner_is_403(ro_api):
    reply = await ro_api.put("/orgs/pub/public_members/ghost", as_="stranger")
    assert reply.status == 403 and reply.json["message"] == ONLY_YOUR_OWN


async def test_rule_2_unknown_user_is_404(ro_api):
    for name in ("ghost", "pub", "bad name", "x" * 300):
        reply = await ro_api.put(f"/orgs/pub/public_members/{name}", as_="owner")
        assert reply.status == 404, name


async def test_rule_3_user_who_is_not_a_member_is_404(ro_api):
    # the owner asking about a stranger, and the stranger asking about themselves
    assert (await ro_api.put("/orgs/pub/public_members/stan", as_="owner")).status == 404
    assert (await ro_api.put("/orgs/pub/public_members/stan", as_="stranger")).status == 404
    assert (await ro_api.delete("/orgs/pub/public_members/stan", as_="stranger")).status == 404


@pytest.mark.parametrize("method", ["put", "delete"])
async def test_public_membership_anonymous_is_401(ro_api, method):
    reply = await getattr(ro_api, method)("/orgs/pub/public_members/mia")
    assert reply.status == 401


async def test_public_membership_in_an_org_the_caller_cannot_see_is_404(ro_api):
    # a stranger's own name in a private organization: the organization does not exist for them
    assert (await ro_api.put("/orgs/priv/public_members/stan", as_="stranger")).status == 404
    assert (await ro_api.put("/orgs/nobody/public_members/stan", as_="stranger")).status == 404


async def test_concealed_member_can_publicize_in_private_org(api, ids):
    assert (await api.put("/orgs/priv/public_members/cora", as_="concealed")).status == 204
    assert "cora" in await logins(api, "priv")
