"""Helpers of the rollout-plan tests: a repository with an old and a staged new release, fast
evaluations, and the plan's API."""

from __future__ import annotations

from typing import Any

from forge_releases.options import Options

API = "/api/v2/repos/owner/app/releases"
FEEDS = f"{API}/feeds"
UPDATE = f"{API}/update"
TOKENS = {"owner": "owner-token", "reader": "reader-token", "stranger": "stranger-token"}
# evaluations every 50 ms and insights written every 50 ms: a plan of 1-second steps runs in
# seconds (the documented test setting, docs/rollouts.md)
FAST_PLANS = Options(rollout_interval=0.05, insights_flush_interval=0.05)
NO_GATES = {"uptake": {"enabled": False}, "external": {"enabled": False}}


def auth(who: str) -> dict[str, str]:
    return {"Authorization": f"token {TOKENS[who]}"}


def world(*, private: bool = True, new_rollout: int | None = 5) -> dict[str, Any]:
    """`owner/app` with v1.0.0 (everyone) and v1.1.0 (staged), each with a Squirrel.Windows
    package, an AppImage and a yml-free layout; `reader` reads it, `stranger` does not."""

    def release(tag: str, minute: int, **flags: Any) -> dict[str, Any]:
        version = tag[1:]
        names = [f"App-{version}-full.nupkg", f"App-{version}.AppImage"]
        return {
            "tag": tag,
            "created_at": f"2026-01-01T00:{minute:02d}:00Z",
            "assets": [{"name": name, "content": f"{name} bytes"} for name in names],
            **flags,
        }

    return {
        "users": [{"name": name, "tokens": [token]} for name, token in TOKENS.items()],
        "repos": [
            {
                "owner": "owner",
                "name": "app",
                "private": private,
                "collaborators": [{"user": "reader", "permission": "read"}],
                "releases": [
                    release("v1.0.0", 1),
                    release("v1.1.0", 2, **({"rollout": new_rollout} if new_rollout else {})),
                ],
            }
        ],
    }


def steps(*percents: int, hold: int = 1, min_installs: int = 0) -> list[dict[str, int]]:
    return [{"percent": p, "hold_seconds": hold, "min_installs": min_installs} for p in percents]


async def release_ids(client: Any) -> dict[str, int]:
    listed = await client.get(API, headers=auth("owner"))
    return {r["tag_name"]: r["id"] for r in await listed.json()}


async def plan_state(client: Any, release_id: int, who: str = "owner") -> Any:
    resp = await client.get(f"{API}/{release_id}/rollout_plan", headers=auth(who))
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def advances_of(db: Any, release_id: int) -> list[tuple[str, int, int]]:
    rows = await db.fetch(
        "SELECT kind, step, percent FROM releases.rollout_events WHERE release_id = $1 ORDER BY id",
        release_id,
    )
    return [(r["kind"], r["step"], r["percent"]) for r in rows]
