"""docs/events.md: each write emits its org.* event through the outbox in the same transaction; a
write that changes nothing, or fails, emits nothing."""

from __future__ import annotations


async def events(db):
    return await db.fetch(
        """SELECT type, source, org_id, repo_id, actor_id, payload
             FROM core.outbox ORDER BY occurred_at"""
    )


async def test_every_write_emits_its_event(api, ids, db):
    pub, olive = ids.accounts["pub"], ids.accounts["olive"]
    spare = ids.repos[("pub", "spare")]
    created = await api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "spare"})
    group = await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": "New"})
    gid = group.json["id"]
    await api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"collapsed": True})
    orders = [{"repo_id": spare, "group_id": gid, "display_order": 9}]
    await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
    await api.delete(f"/orgs/pub/pinned/groups/{gid}", as_="owner")
    await api.delete("/orgs/pub/pinned/spare", as_="owner")
    await api.put("/orgs/pub/public_members/cora", as_="concealed")
    await api.delete("/orgs/pub/public_members/cora", as_="owner")
    rows = await events(db)
    assert [r["type"] for r in rows] == [
        "org.pin.created",
        "org.pin_group.created",
        "org.pin_group.updated",
        "org.pins.reordered",
        "org.pin_group.deleted",
        "org.pin.deleted",
        "org.member.publicized",
        "org.member.concealed",
    ]
    assert {r["source"] for r in rows} == {"orgs"}
    assert {r["org_id"] for r in rows} == {pub}
    assert [r["actor_id"] for r in rows][:6] == [olive] * 6
    assert rows[6]["actor_id"] == ids.accounts["cora"]
    assert rows[0]["repo_id"] == spare and rows[5]["repo_id"] == spare
    # flat payloads, as proto/plugin/v1/EVENTS.md documents them for plugin authors
    assert rows[0]["payload"] == {
        "org_id": pub,
        "org": "pub",
        "pin_id": created.json["id"],
        "repo_id": spare,
        "repo": "spare",
        "group_id": 0,
        "display_order": 0,
    }
    assert rows[1]["payload"] == {
        "org_id": pub,
        "org": "pub",
        "group_id": gid,
        "name": "New",
        "display_order": 0,
        "collapsed": False,
    }
    assert rows[2]["payload"]["changed"] == ["collapsed"]
    assert rows[2]["payload"]["collapsed"] is True
    assert rows[3]["payload"]["orders"] == orders
    assert rows[4]["payload"]["group_id"] == gid and rows[4]["payload"]["name"] == "New"
    assert rows[5]["payload"] == {"org_id": pub, "org": "pub", "pin_id": created.json["id"],
                                  "repo_id": spare, "repo": "spare"}  # fmt: skip
    assert rows[7]["payload"] == {
        "org_id": pub,
        "org": "pub",
        "user_id": ids.accounts["cora"],
        "login": "cora",
    }


async def test_no_event_without_a_change(api, ids, db):
    gid = (await api.get("/orgs/pub/pinned/groups", as_="owner")).json[0]["id"]
    await api.delete("/orgs/pub/pinned/spare", as_="owner")  # not pinned
    await api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={"name": "Featured"})
    await api.put(f"/orgs/pub/pinned/groups/{gid}", as_="owner", json={})
    current = (await api.get("/orgs/pub/pinned", as_="owner")).json
    orders = [
        {"repo_id": p["repo_id"], "group_id": p["group_id"], "display_order": p["display_order"]}
        for p in current
    ]
    assert (
        await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
    ).status == 204
    assert (
        await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": []})
    ).status == 204
    await api.put("/orgs/pub/public_members/mia", as_="member")  # already public
    await api.delete("/orgs/pub/public_members/cora", as_="concealed")  # already concealed
    assert await events(db) == []


async def test_failed_writes_emit_nothing(api, ids, db):
    await api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "open"})  # already pinned
    await api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "spare", "group_id": 77})
    await api.post("/orgs/pub/pinned", as_="member", json={"repo_name": "spare"})
    await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": " "})
    orders = [
        {"repo_id": ids.repos[("pub", "open")], "group_id": 0, "display_order": 5},
        {"repo_id": ids.repos[("pub", "spare")], "group_id": 0, "display_order": 1},
    ]
    await api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders})
    await api.delete("/orgs/pub/pinned/groups/999", as_="owner")
    await api.put("/orgs/pub/public_members/cora", as_="member")
    await api.put("/orgs/pub/public_members/stan", as_="owner")
    assert await events(db) == []
