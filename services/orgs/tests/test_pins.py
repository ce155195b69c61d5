"""docs/orgs.md "Endpoints": GET/POST /orgs/{org}/pinned, DELETE
/orgs/{org}/pinned/{repo}, PUT /orgs/{org}/pinned/reorder, with the decisions of docs/orgs.md."""

from __future__ import annotations

import pytest


def names(reply):
    return [p["repo"]["name"] for p in reply.json]


async def test_list_pins_ordered_by_display_order_then_id(ro_api, ro_ids):
    reply = await ro_api.get("/orgs/pub/pinned", as_="owner")
    assert reply.status == 200
    assert names(reply) == ["open", "secret", "loose"]
    first = reply.json[0]
    assert first["repo_id"] == ro_ids.repos[("pub", "open")]
    assert first["group"]["name"] == "Featured" and first["group_id"] == first["group"]["id"]
    loose = reply.json[2]
    assert loose["group_id"] == 0 and "group" not in loose


async def test_list_pins_of_unknown_org_is_404(ro_api, ro_ids):
    assert (await ro_api.get("/orgs/nobody/pinned")).status == 404
    # a user is not an organization
    assert (await ro_api.get("/orgs/olive/pinned")).status == 404


async def test_list_pins_leaves_out_entries_whose_repository_cannot_be_loaded(api, ids, db):
    # a repository moved to another owner no longer belongs to the organization's profile
    await db.execute(
        "UPDATE core.repositories SET owner_id = $1 WHERE id = $2",
        ids.accounts["olive"],
        ids.repos[("pub", "loose")],
    )
    reply = await api.get("/orgs/pub/pinned", as_="owner")
    assert names(reply) == ["open", "secret"]


async def test_embedded_repository_rendered_as_if_viewer_had_read_permission(ro_api, ro_ids):
    for viewer in ("anonymous", "member", "owner", "admin"):
        reply = await ro_api.get("/orgs/pub/pinned", as_=viewer)
        for pin in reply.json:
            assert pin["repo"]["permissions"] == {"admin": False, "push": False, "pull": True}
    repo = reply.json[0]["repo"]
    assert repo["full_name"] == "pub/open"
    assert repo["html_url"] == "http://forge.test/pub/open"
    assert repo["owner"]["login"] == "pub"
    assert repo["created_at"].endswith("Z") and len(repo["created_at"]) == 20


async def test_pin_201_with_repo_filled(api, ids):
    reply = await api.post(
        "/orgs/pub/pinned", as_="owner", json={"repo_name": "spare", "display_order": 7}
    )
    assert reply.status == 201
    body = reply.json
    assert body["repo"]["name"] == "spare" and body["repo_id"] == ids.repos[("pub", "spare")]
    assert body["display_order"] == 7 and body["group_id"] == 0 and "group" not in body
    assert "spare" in names(await api.get("/orgs/pub/pinned", as_="owner"))


async def test_pin_201_with_group_filled_when_group_id_names_a_group(api, ids):
    groups = (await api.get("/orgs/pub/pinned/groups", as_="owner")).json
    featured = next(g for g in groups if g["name"] == "Featured")
    reply = await api.post(
        "/orgs/pub/pinned", as_="owner", json={"repo_name": "SPARE", "group_id": featured["id"]}
    )
    assert reply.status == 201
    assert reply.json["group"] == featured and reply.json["group_id"] == featured["id"]


async def test_pin_with_group_id_naming_no_group_of_this_org_is_422(api, ids, db):
    other = await db.fetchval(
        "SELECT id FROM orgs.pin_groups WHERE org_id = $1 LIMIT 1", ids.accounts["lim"]
    )
    for group_id in (other, 999_999):
        reply = await api.post(
            "/orgs/pub/pinned", as_="owner", json={"repo_name": "spare", "group_id": group_id}
        )
        assert reply.status == 422 and reply.json["errors"] == ["group_id"]
    assert "spare" not in names(await api.get("/orgs/pub/pinned", as_="owner"))


async def test_pin_404_when_repo_name_names_no_repository_of_the_organization(api, ids):
    for name in ("nope", "../open", "open\u00e9"):
        reply = await api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": name})
        assert reply.status == 404
    # a repository of another organization is not one of this organization
    await api.post("/orgs/lim/pinned", as_="owner", json={"repo_name": "spare"})
    reply = await api.post("/orgs/pub/pinned", as_="admin", json={"repo_name": "vault"})
    assert reply.status == 201


async def test_pin_422_repository_is_already_pinned(ro_api, ro_ids):
    reply = await ro_api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "open"})
    assert reply.status == 422
    assert reply.json["message"] == "Repository is already pinned"


async def test_pin_422_on_validation_failure(ro_api, ro_ids):
    for body in ({}, {"repo_name": ""}, {"repo_name": 5}, {"repo_name": "spare", "group_id": "1"}):
        reply = await ro_api.post("/orgs/pub/pinned", as_="owner", json=body)
        assert reply.status == 422, body
        assert reply.json["errors"]


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_pin_write_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    reply = await ro_api.post("/orgs/pub/pinned", as_=viewer, json={"repo_name": "spare"})
    assert reply.status == status


async def test_pin_by_site_admin_is_allowed(api, ids):
    reply = await api.post("/orgs/priv/pinned", as_="admin", json={"repo_name": "spare"})
    assert reply.status == 201


async def test_unpin_204_and_the_pin_is_gone(api, ids):
    reply = await api.delete("/orgs/pub/pinned/open", as_="owner")
    assert reply.status == 204 and reply.raw == b""
    assert names(await api.get("/orgs/pub/pinned", as_="owner")) == ["secret", "loose"]


async def test_unpin_of_existing_but_unpinned_repository_is_204(api, ids):
    assert (await api.delete("/orgs/pub/pinned/spare", as_="owner")).status == 204


async def test_unpin_404_when_repository_does_not_exist_in_the_organization(ro_api, ro_ids):
    assert (await ro_api.delete("/orgs/pub/pinned/nope", as_="owner")).status == 404
    assert (await ro_api.delete("/orgs/nobody/pinned/open", as_="owner")).status == 404


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_unpin_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    assert (await ro_api.delete("/orgs/pub/pinned/open", as_=viewer)).status == status
    assert "open" in names(await ro_api.get("/orgs/pub/pinned", as_="owner"))


async def test_reorder_each_entry_sets_group_and_display_order(api, ids):
    groups = {
        g["name"]: g["id"] for g in (await api.get("/orgs/pub/pinned/groups", as_="owner")).json
    }
    orders = [
        {"repo_id": ids.repos[("pub", "loose")], "group_id": groups["Hidden"], "display_order": 1},
        {"repo_id": ids.repos[("pub", "open")], "group_id": 0, "display_order": 2},
        {
            "repo_id": ids.repos[("pub", "secret")],
            "group_id": groups["Featured"],
            "display_order": 3,
        },
    ]
    reply = await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
    assert reply.status == 204 and reply.raw == b""
    pins = (await api.get("/orgs/pub/pinned", as_="owner")).json
    assert [(p["repo"]["name"], p["group_id"], p["display_order"]) for p in pins] == [
        ("loose", groups["Hidden"], 1),
        ("open", 0, 2),
        ("secret", groups["Featured"], 3),
    ]


async def test_reorder_entry_naming_a_repository_not_pinned_here_is_422_and_nothing_changes(
    ro_api, ro_ids
):
    before = (await ro_api.get("/orgs/pub/pinned", as_="owner")).json
    for stray in (ro_ids.repos[("pub", "spare")], ro_ids.repos[("lim", "open")], 987_654):
        orders = [
            {"repo_id": ro_ids.repos[("pub", "loose")], "group_id": 0, "display_order": -5},
            {"repo_id": stray, "group_id": 0, "display_order": 1},
        ]
        reply = await ro_api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
        assert reply.status == 422
        assert reply.json["errors"] == ["orders[1].repo_id"]
    assert (await ro_api.get("/orgs/pub/pinned", as_="owner")).json == before


async def test_reorder_entry_naming_a_group_of_another_org_is_422_and_nothing_changes(api, ids, db):
    before = (await api.get("/orgs/pub/pinned", as_="owner")).json
    other = await db.fetchval(
        "SELECT id FROM orgs.pin_groups WHERE org_id = $1 LIMIT 1", ids.accounts["lim"]
    )
    orders = [
        {"repo_id": ids.repos[("pub", "loose")], "group_id": 0, "display_order": 9},
        {"repo_id": ids.repos[("pub", "open")], "group_id": other, "display_order": 1},
    ]
    reply = await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
    assert reply.status == 422 and reply.json["errors"] == ["orders[1].group_id"]
    assert (await api.get("/orgs/pub/pinned", as_="owner")).json == before


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_reorder_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    orders = [{"repo_id": ro_ids.repos[("pub", "loose")], "group_id": 0, "display_order": 0}]
    reply = await ro_api.put("/orgs/pub/pinned/reorder", as_=viewer, json={"orders": orders})
    assert reply.status == status


async def test_reorder_validation(ro_api, ro_ids):
    loose = ro_ids.repos[("pub", "loose")]
    cases = [
        ({}, "orders"),
        ({"orders": {}}, "orders"),
        ({"orders": [1]}, "orders[0]"),
        ({"orders": [{"group_id": 0}]}, "orders[0].repo_id"),
        ({"orders": [{"repo_id": "1"}]}, "orders[0].repo_id"),
        ({"orders": [{"repo_id": loose, "display_order": 2**31}]}, "orders[0].display_order"),
        ({"orders": [{"repo_id": loose, "group_id": -1}]}, "orders[0].group_id"),
        ({"orders": [{"repo_id": loose}, {"repo_id": loose}]}, "orders[1].repo_id"),
    ]
    for body, field in cases:
        reply = await ro_api.put("/orgs/pub/pinned/reorder", as_="owner", json=body)
        assert reply.status == 422, body
        assert reply.json["errors"] == [field], body
