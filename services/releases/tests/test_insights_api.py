"""GET /api/v2/repos/{owner}/{repo}/insights (docs/insights.md "API"): series by each dimension,
daily and hourly; bad parameters; and privacy: only admins and publishers see anything, everyone
else gets the very bytes of a repository that does not exist."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from forge_common.config import ConfigError, Settings
from forge_common.keys import DB_POOL
from forge_releases.insights.counter import InsightsCounter
from forge_releases.insights.dimensions import Defaults
from forge_releases.options import Options, with_settings

Client = TestClient[Any, Any]
USERS = ("owner", "stranger", "reader", "writer", "admin", "siteadmin", "member", "orgowner")
# repository → (owner, private, public_landing, public_releases)
REPOS = {
    "pub": ("owner", False, False, False),
    "priv": ("owner", True, False, False),
    "landing": ("owner", True, True, False),
    "relpub": ("owner", True, False, True),
    "secret": ("hidden", False, False, False),  # a public repository of a private organization
    "limited": ("ltd", False, False, False),  # a public repository of a limited organization
}
# caller → the repositories whose insights they may read (write access or more)
ALLOWED = {
    "anonymous": set(),
    "stranger": set(),
    "reader": set(),
    "member": set(),  # a plain member of the organizations: read through the team
    # outside collaborators: a private organization does not exist for them (docs/access.md)
    "writer": {"pub", "priv", "landing", "relpub", "limited"},
    "admin": {"pub", "priv", "landing", "relpub", "limited"},
    "siteadmin": set(REPOS),
    "owner": {"pub", "priv", "landing", "relpub"},
    "orgowner": {"secret", "limited"},
}


def world() -> dict[str, Any]:
    collaborators = [
        {"user": "reader", "permission": "read"},
        {"user": "writer", "permission": "write"},
        {"user": "admin", "permission": "admin"},
    ]

    def org(name: str, visibility: str, repo: str) -> dict[str, Any]:
        team = {"name": "t", "permission": "read", "members": ["member"], "repos": [repo]}
        members = [{"user": "orgowner", "owner": True}, {"user": "member"}]
        return {"name": name, "visibility": visibility, "members": members, "teams": [team]}

    return {
        "users": [
            {"name": name, "tokens": [f"{name}-token"], "admin": name == "siteadmin"}
            for name in USERS
        ],
        "orgs": [
            org("hidden", "private", "secret"),
            org("ltd", "limited", "limited"),
        ],
        "repos": [
            {
                "owner": owner,
                "name": name,
                "private": private,
                "public_landing": landing,
                "public_releases": releases,
                "collaborators": collaborators,
                "releases": [
                    {
                        "tag": "v1.0.0",
                        "created_at": "2026-01-01T00:00:00Z",
                        "assets": [{"name": "App-1.0.0-x64.zip", "size": 10}],
                    }
                ],
            }
            for name, (owner, private, landing, releases) in REPOS.items()
        ],
    }  # fmt: skip


def headers(caller: str) -> dict[str, str]:
    fixed = {"X-Request-Id": "insights-privacy"}
    return fixed if caller == "anonymous" else {**fixed, "Authorization": f"token {caller}-token"}


def url(owner: str, repo: str, query: str = "") -> str:
    return f"/api/v2/repos/{owner}/{repo}/insights{query}"


async def answer(client: Client, path: str, caller: str) -> tuple[int, dict[str, str], bytes]:
    resp = await client.get(path, headers=headers(caller))
    kept = {k: v for k, v in resp.headers.items() if k not in ("Date", "Content-Length")}
    return resp.status, kept, await resp.read()


@pytest.fixture
async def client(make_client: Any, load: Any) -> Client:
    await load(world())
    made: Client = await make_client()
    return made


@pytest.mark.parametrize("caller", sorted(ALLOWED))
async def test_insights_only_for_admins_and_publishers(client: Client, caller: str) -> None:
    for repo, (owner, *_) in REPOS.items():
        status, got_headers, body = await answer(client, url(owner, repo), caller)
        if repo in ALLOWED[caller]:
            assert status == 200, (caller, repo, body)
            assert got_headers["Cache-Control"] == "no-store"
            continue
        # byte-identical to a repository that does not exist, under the same owner and another
        missing = await answer(client, url(owner, "no-such-repo"), caller)
        assert (status, got_headers, body) == missing, (caller, repo)
        assert (status, got_headers, body) == await answer(client, url("nobody", "x"), caller)
        assert status == 404


async def test_an_update_key_does_not_open_insights(client: Client) -> None:
    created = await client.post(
        "/api/v2/repos/owner/priv/update_keys", json={"name": "ci"}, headers=headers("admin")
    )
    key = (await created.json())["key"]
    got = await answer(client, url("owner", "priv", f"?key={key}"), "anonymous")
    assert got == await answer(client, url("owner", "no-such-repo", f"?key={key}"), "anonymous")


async def counted(client: Client, at: datetime, *entries: tuple[str, bytes, int]) -> None:
    repo_id = await client.app[DB_POOL].fetchval(
        "SELECT id FROM core.repositories WHERE name = 'pub'"
    )
    counter = InsightsCounter(Defaults("linux", "x64"), clock=at.timestamp)
    for key, body, n in entries:
        for _ in range(n):
            counter.checked(repo_id, key, body)
    await counter.flush(client.app[DB_POOL])


OFFER = b'{"name":"v1.1.0"}'


async def test_daily_series_by_each_dimension(client: Client) -> None:
    day1 = datetime(2026, 3, 1, 10, tzinfo=UTC)
    await counted(client, day1, ("version=1.0.0&platform=darwin&arch=arm64", OFFER, 3))
    await counted(client, day1 + timedelta(days=2), ("version=1.1.0&platform=windows", b"", 2))
    await counted(client, day1 + timedelta(days=2), ("version=1.0.0&platform=darwin", OFFER, 1))
    query = "?from=2026-03-01&to=2026-03-03"
    resp = await client.get(url("owner", "pub", query), headers=headers("writer"))
    body = await resp.json()
    assert body["interval"] == "day" and body["by"] == "version"
    assert body["buckets"] == ["2026-03-01", "2026-03-02", "2026-03-03"]
    assert body["checks"] == {
        "total": 6,
        "series": [
            {"value": "1.0.0", "total": 4, "counts": [3, 0, 1]},
            {"value": "1.1.0", "total": 2, "counts": [0, 0, 2]},
        ],
    }
    assert body["downloads"] == {"total": 0, "series": []}
    expected = {
        "platform": {"darwin": 4, "windows": 2},
        "arch": {"arm64": 3, "x64": 3},  # the server's default arch when none is sent
        "offered": {"1.1.0": 4, "": 2},
        "channel": {"stable": 6},
        "feed": {"update": 6},
    }
    for by, totals in expected.items():
        resp = await client.get(url("owner", "pub", f"{query}&by={by}"), headers=headers("admin"))
        series = (await resp.json())["checks"]["series"]
        assert {s["value"]: s["total"] for s in series} == totals, by


async def test_hourly_series(client: Client) -> None:
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    await counted(client, now - timedelta(hours=2), ("version=1.0.0", b"", 5))
    await counted(client, now, ("version=1.0.0", b"", 1))
    resp = await client.get(url("owner", "pub", "?interval=hour"), headers=headers("owner"))
    body = await resp.json()
    assert len(body["buckets"]) == 48
    assert body["buckets"][-1] == now.strftime("%Y-%m-%dT%H:%M:%SZ")
    (series,) = body["checks"]["series"]
    assert series["counts"][-3:] == [5, 0, 1]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?interval=week", "interval must be day or hour: 'week'"),
        ("?by=ip", "by must be one of version, offered, platform, arch, channel, feed, file: 'ip'"),
        ("?from=yesterday", "from must be a date (YYYY-MM-DD): 'yesterday'"),
        ("?from=2026-03-02&to=2026-03-01", "from must not be after to"),
        ("?from=2020-01-01&to=2026-01-01", "at most 731 days at a time"),
        ("?interval=hour&from=2026-03-01&to=2026-03-05", "at most 72 hours at a time"),
        ("?interval=hour&to=noon", "to must be a time (YYYY-MM-DDTHH:MM:SSZ) or a date: 'noon'"),
        ("?to=0001-01-02", "from and to must lie between the years 1 and 9999"),
        (
            "?interval=hour&to=0001-01-01T01:00:00Z",
            "from and to must lie between the years 1 and 9999",
        ),
    ],
)
async def test_bad_parameters_are_400(client: Client, query: str, message: str) -> None:
    resp = await client.get(url("owner", "pub", query), headers=headers("writer"))
    assert resp.status == 400
    error = (await resp.json())["error"]
    assert (error["code"], error["message"]) == ("ValInvalidInput", message)


async def test_bad_parameters_never_tell_outsiders_anything(client: Client) -> None:
    got = await answer(client, url("owner", "priv", "?interval=week"), "reader")
    assert got == await answer(client, url("owner", "no-such-repo", "?interval=week"), "reader")


async def test_settings_read_retention(settings: Settings) -> None:
    assert settings.insights_retention_days == 400
    env = {"DATABASE_URL": "postgresql://x/y", "INSIGHTS_RETENTION_DAYS": "30"}
    assert Settings.from_env(env).insights_retention_days == 30
    assert Settings.from_env({**env, "INSIGHTS": "off"}).insights_enabled is False
    # INSIGHTS_FLUSH_SECONDS: the service's write interval (docs/insights.md "What a crash loses")
    assert with_settings(Options(), Settings.from_env(env)).insights_flush_interval == 2.0
    quick = Settings.from_env({**env, "INSIGHTS_FLUSH_SECONDS": "0.5"})
    assert with_settings(Options(), quick).insights_flush_interval == 0.5
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ConfigError, match="INSIGHTS_FLUSH_SECONDS"):
            Settings.from_env({**env, "INSIGHTS_FLUSH_SECONDS": bad})


async def test_daily_series_across_months(client: Client) -> None:
    """Days come from one row per month: a window starting and ending inside months, across a
    short February, puts each day's count at its place."""
    for day, n in (("2026-01-29", 9), ("2026-01-31", 1), ("2026-02-28", 2), ("2026-03-01", 3)):
        at = datetime.fromisoformat(f"{day}T12:00:00+00:00")
        await counted(client, at, ("version=1.0.0", b"", n))
    resp = await client.get(
        url("owner", "pub", "?from=2026-01-30&to=2026-03-02"), headers=headers("owner")
    )
    body = await resp.json()
    assert len(body["buckets"]) == 32
    (series,) = body["checks"]["series"]
    counts = dict(zip(body["buckets"], series["counts"], strict=True))
    assert {day: n for day, n in counts.items() if n} == {
        "2026-01-31": 1,
        "2026-02-28": 2,
        "2026-03-01": 3,
    }
    assert series["total"] == body["checks"]["total"] == 6
