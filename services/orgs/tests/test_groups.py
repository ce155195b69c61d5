"""docs/orgs.md "Endpoints": GET/POST /orgs/{org}/pinned/groups and PUT/DELETE
/orgs/{org}/pinned/groups/{id}."""

from __future__ import annotations

import pytest


async def group_ids(api, org="pub"):
    return {
        g["name"]: g["id"] for g in (await api.get(f"/orgs/{org}/pinned/groups", as_="owner")).json
    }


async def test_list_groups_ordered_by_display_order_then_id(ro_api, ro_ids):
    reply = await ro_api.get("/orgs/pub/pinned/groups", as_="owner")
    assert reply.status == 200
    assert [(g["name"], g["display_order"], g["collapsed"]) for g in reply.json] == [
        ("Featured", 1, False),
        ("Hidden", 2, True),
    ]


async def test_list_groups_of_unknown_org_is_404(ro_api, ro_ids):
    assert (await ro_api.get("/orgs/nobody/pinned/groups")).status == 404


async def test_create_group_201(api, ids):
    body = {"name": "  Tools  ", "display_order": -3, "collapsed": True, "colour": "ignored"}
    reply = await api.post("/orgs/pub/pinned/groups", as_="owner", json=body)
    assert reply.status == 201
    assert reply.json["name"] == "Tools" and reply.json["display_order"] == -3
    assert reply.json["collapsed"] is True and reply.json["id"] > 0
    listed = (await api.get("/orgs/pub/pinned/groups", as_="owner")).json
    assert listed[0] == reply.json


async def test_create_group_defaults(api, ids):
    reply = await api.post("/orgs/pub/pinned/groups", as_="admin", json={"name": "Plain"})
    assert reply.status == 201
    assert reply.json["display_order"] == 0 and reply.json["collapsed"] is False


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_create_group_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    reply = await ro_api.post("/orgs/pub/pinned/groups", as_=viewer, json={"name": "X"})
    assert reply.status == status


@pytest.mark.parametrize("name", ["", "   ", "\t\n", "x" * 101, 5, True, ["a"], "nul\u0000byte"])
async def test_create_group_bad_name_is_422_naming_name(ro_api, ro_ids, name):
    reply = await ro_api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": name})
    assert reply.status == 422 and reply.json["errors"] == ["name"]


# docs/orgs.md "Request bodies": the rule of every display name we store (forge_common.names),
# the one asset names follow: no control character, no bidirectional override or other format
# character, nothing that was not UTF-8.
HIDDEN = [
    "bell\u0007",
    "\u202eexe.txt",
    "zero\u200bwidth",
    "del\u007f",
    "next\u0085line",
    "bom\ufeff",
]


@pytest.mark.parametrize("name", HIDDEN)
async def test_group_names_with_hidden_characters_are_422_on_create_and_update(
    ro_api, ro_ids, name
):
    reply = await ro_api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": name})
    assert reply.status == 422 and reply.json["errors"] == ["name"]
    gid = (await group_ids(ro_api))["Featured"]
    reply = await ro_api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"name": name})
    assert reply.status == 422 and reply.json["errors"] == ["name"]
    assert "Featured" in await group_ids(ro_api)


async def test_create_group_name_of_100_characters_and_unicode_is_accepted(api, ids):
    for name in ("x" * 100, "Ünïcødé ✓ 🚀"):
        reply = await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": name})
        assert reply.status == 201 and reply.json["name"] == name


@pytest.mark.parametrize("order", [2**31, -(2**31) - 1, 1.5, "1", True])
async def test_create_group_display_order_outside_int32_or_not_integer_is_422(
    ro_api, ro_ids, order
):
    reply = await ro_api.post(
        "/orgs/pub/pinned/groups", as_="owner", json={"name": "X", "display_order": order}
    )
    assert reply.status == 422 and reply.json["errors"] == ["display_order"]


async def test_update_group_200_only_supplied_fields_change(api, ids):
    gid = (await group_ids(api))["Hidden"]
    reply = await api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"name": "Shown"})
    assert reply.status == 200
    assert reply.json == {"id": gid, "name": "Shown", "display_order": 2, "collapsed": True}
    reply = await api.put(
        f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"collapsed": False, "name": None}
    )
    assert reply.json == {"id": gid, "name": "Shown", "display_order": 2, "collapsed": False}
    reply = await api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"display_order": 0})
    assert reply.json == {"id": gid, "name": "Shown", "display_order": 0, "collapsed": False}
    # the pins of the group show the new values
    pins = (await api.get("/orgs/pub/pinned", as_="owner")).json
    assert next(p for p in pins if p["repo"]["name"] == "secret")["group"] == reply.json


async def test_update_group_404_when_group_belongs_to_another_organization(ro_api, ro_ids):
    other = (await group_ids(ro_api, "lim"))["Featured"]
    reply = await ro_api.put(f"/orgs/pub/pinned/groups/{other}", as_="owner", json={"name": "Mine"})
    assert reply.status == 404
    assert (await group_ids(ro_api, "lim"))["Featured"] == other


@pytest.mark.parametrize("raw", ["999999", "abc", "1.5", "-1", "0", "99999999999999999999", "١"])
async def test_update_group_404_when_group_does_not_exist_or_id_is_not_an_integer(
    ro_api, ro_ids, raw
):
    reply = await ro_api.put(f"/orgs/pub/pinned/groups/{raw}", as_="owner", json={"name": "N"})
    assert reply.status == 404


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_update_group_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    gid = (await group_ids(ro_api))["Featured"]
    reply = await ro_api.put(f"/orgs/pub/pinned/groups/{gid}", as_=viewer, json={"name": "Z"})
    assert reply.status == status


async def test_update_group_validation(ro_api, ro_ids):
    gid = (await group_ids(ro_api))["Featured"]
    for body, field in [
        ({"name": " "}, "name"),
        ({"name": "y" * 101}, "name"),
        ({"display_order": 2**31}, "display_order"),
        ({"collapsed": "yes"}, "collapsed"),
    ]:
        reply = await ro_api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json=body)
        assert reply.status == 422 and reply.json["errors"] == [field]


async def test_delete_group_204_and_its_pins_move_to_no_group(api, ids):
    gid = (await group_ids(api))["Featured"]
    reply = await api.delete(f"/orgs/pub/pinned/groups/{gid}", as_="owner")
    assert reply.status == 204 and reply.raw == b""
    assert "Featured" not in await group_ids(api)
    pins = (await api.get("/orgs/pub/pinned", as_="owner")).json
    open_pin = next(p for p in pins if p["repo"]["name"] == "open")
    assert open_pin["group_id"] == 0 and "group" not in open_pin


async def test_delete_group_404_when_missing_or_of_another_organization(ro_api, ro_ids):
    other = (await group_ids(ro_api, "lim"))["Featured"]
    assert (await ro_api.delete(f"/orgs/pub/pinned/groups/{other}", as_="owner")).status == 404
    assert (await ro_api.delete("/orgs/pub/pinned/groups/424242", as_="owner")).status == 404
    assert (await ro_api.delete("/orgs/pub/pinned/groups/x", as_="owner")).status == 404
    assert "Featured" in await group_ids(ro_api, "lim")


@pytest.mark.parametrize(
    ("viewer", "status"), [("anonymous", 401), ("stranger", 403), ("member", 403)]
)
async def test_delete_group_requires_org_owner_or_site_admin(ro_api, ro_ids, viewer, status):
    gid = (await group_ids(ro_api))["Featured"]
    assert (await ro_api.delete(f"/orgs/pub/pinned/groups/{gid}", as_=viewer)).status == status
    assert "Featured" in await group_ids(ro_api)
