"""Two simultaneous pins of the same repository: one 201 and one 422 `Repository is already
pinned`, never a 500; the unique constraint decides. Two real concurrent HTTP requests."""

from __future__ import annotations

import asyncio


async def test_two_concurrent_pins_of_one_repository_give_one_201_and_one_422(api, ids, db):
    for attempt in range(5):
        await db.execute("DELETE FROM orgs.pins WHERE repo_id = $1", ids.repos[("pub", "spare")])
        await db.execute("DELETE FROM core.outbox")
        replies = await asyncio.gather(
            api.post("/orgs/pub/pinned", as_="owner", json={"repo_name": "spare"}),
            api.post("/orgs/pub/pinned", as_="admin", json={"repo_name": "spare"}),
        )
        assert sorted(r.status for r in replies) == [201, 422], attempt
        loser = next(r for r in replies if r.status == 422)
        assert loser.json["message"] == "Repository is already pinned"
        assert (
            await db.fetchval(
                "SELECT count(*) FROM orgs.pins WHERE repo_id = $1", ids.repos[("pub", "spare")]
            )
            == 1
        )
        assert await db.fetchval("SELECT count(*) FROM core.outbox") == 1


async def test_concurrent_reorders_each_apply_whole(api, ids):
    open_id, loose_id = ids.repos[("pub", "open")], ids.repos[("pub", "loose")]
    first = [
        {"repo_id": open_id, "group_id": 0, "display_order": 1},
        {"repo_id": loose_id, "group_id": 0, "display_order": 2},
    ]
    second = [
        {"repo_id": open_id, "group_id": 0, "display_order": 20},
        {"repo_id": loose_id, "group_id": 0, "display_order": 10},
    ]
    replies = await asyncio.gather(
        api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": first}),
        api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": second}),
    )
    assert [r.status for r in replies] == [204, 204]
    pins = {
        p["repo_id"]: p["display_order"]
        for p in (await api.get("/orgs/pub/pinned", as_="owner")).json
    }
    assert (pins[open_id], pins[loose_id]) in {(1, 2), (20, 10)}


async def test_reorder_racing_a_group_delete_never_500(api, ids):
    """A reorder into a group while that group is deleted: each answer is one the spec allows."""
    open_id, loose_id = ids.repos[("pub", "open")], ids.repos[("pub", "loose")]
    for attempt in range(5):
        group = await api.post("/orgs/pub/pinned/groups", as_="owner", json={"name": f"G{attempt}"})
        gid = group.json["id"]
        orders = [
            {"repo_id": loose_id, "group_id": gid, "display_order": 1},
            {"repo_id": open_id, "group_id": gid, "display_order": 2},
        ]
        reorder, delete = await asyncio.gather(
            api.put("/orgs/pub/pinned/reorder", as_="owner", json={"orders": orders}),
            api.delete(f"/orgs/pub/pinned/groups/{gid}", as_="owner"),
        )
        assert delete.status == 204
        assert reorder.status in (204, 422)
        pins = (await api.get("/orgs/pub/pinned", as_="owner")).json
        assert all(p["group_id"] != gid for p in pins)  # the group is gone, and so is its use
