"""docs/releases.md list rules 1-5 (GET /api/v2/repos/{owner}/{repo}/releases), X-Total-Count
and Link."""

from __future__ import annotations

from typing import Any

from .support import auth, one_repo, rel

LIST = "/api/v2/repos/owner/app/releases"


def many(count: int) -> list[dict[str, Any]]:
    return [rel(f"v1.0.{i}", i, f"App-{i}.zip") for i in range(count)]


async def tags(client: Any, caller: str = "anonymous", **params: str) -> list[str]:
    resp = await client.get(LIST, params=params, headers=auth(caller))
    assert resp.status == 200
    return [r["tag_name"] for r in await resp.json()]


async def test_list_rule_1_page_defaults_to_1(make_client: Any, load: Any) -> None:
    await load(one_repo(many(5)))
    client = await make_client()
    first = await tags(client, limit="2")
    assert first == ["v1.0.4", "v1.0.3"]
    for page in ["1", "0", "-3", "abc", "", "1.5", "9" * 40]:
        assert await tags(client, limit="2", page=page) == first, page
    assert await tags(client, limit="2", page="2") == ["v1.0.2", "v1.0.1"]
    assert await tags(client, limit="2", page="3") == ["v1.0.0"]
    assert await tags(client, limit="2", page="4") == []
    assert await tags(client, limit="100", page="999999999999999999") == []


async def test_list_rule_2_limit_defaults_to_30_max_100(make_client: Any, load: Any) -> None:
    await load(one_repo(many(105)))
    client = await make_client()
    for limit in [None, "0", "-1", "101", "1000", "x", ""]:
        params = {} if limit is None else {"limit": limit}
        assert len(await tags(client, **params)) == 30, limit
    assert len(await tags(client, limit="100")) == 100
    assert len(await tags(client, limit="1")) == 1
    assert len(await tags(client, limit="100", page="2")) == 5


async def test_list_rule_3_prereleases_excluded_unless_asked(make_client: Any, load: Any) -> None:
    await load(
        one_repo([rel("v1.0.0", 1), rel("v1.1.0-rc.1", 2, prerelease=True), rel("v1.1.0", 3)])
    )
    client = await make_client()
    assert await tags(client) == ["v1.1.0", "v1.0.0"]
    assert await tags(client, prereleases="false") == ["v1.1.0", "v1.0.0"]
    assert await tags(client, prereleases="true") == ["v1.1.0", "v1.1.0-rc.1", "v1.0.0"]


async def test_list_rule_4_drafts_only_for_admins_and_never_bare_tags(
    make_client: Any, load: Any
) -> None:
    await load(
        one_repo(
            [
                rel("v1.0.0", 1),
                rel("v2.0.0", 2, draft=True),
                rel("v0.1.0", 3, tag_only=True),
            ],
            collaborators=[{"user": "stranger", "permission": "write"}],
        )
    )
    client = await make_client()
    # the owner is a repository admin: drafts when asked, never bare tags
    assert await tags(client, "owner", drafts="true") == ["v2.0.0", "v1.0.0"]
    assert await tags(client, "owner") == ["v1.0.0"]
    # anonymous and a writer (not admin) ask in vain
    assert await tags(client, drafts="true") == ["v1.0.0"]
    assert await tags(client, "stranger", drafts="true") == ["v1.0.0"]


async def test_list_rule_5_each_release_carries_its_attachments(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "b.zip", "a.exe"), rel("v1.1.0", 2)]))
    client = await make_client()
    resp = await client.get(LIST)
    newer, older = await resp.json()
    assert newer["assets"] == []
    assert [a["name"] for a in older["assets"]] == ["b.zip", "a.exe"]  # attachment order
    first = older["assets"][0]
    assert set(first) == {
        "id", "name", "size", "download_count", "created_at", "uuid", "browser_download_url",
    }  # fmt: skip
    assert first["size"] == 10 and first["download_count"] == 0
    assert first["browser_download_url"] == (
        "http://forge.test/owner/app/releases/download/v1.0.0/b.zip"
    )
    assert first["created_at"] == "2026-01-01T00:01:00Z"


async def test_list_release_wire_fields(make_client: Any, load: Any) -> None:
    release = rel("v1.0.0", 1)
    release.update(title="One", note="Notes", target="main")
    await load(one_repo([release]))
    client = await make_client()
    (body,) = await (await client.get(LIST)).json()
    page = "http://forge.test/owner/app/releases/tag/v1.0.0"
    assert body == {
        "id": body["id"],
        "tag_name": "v1.0.0",
        "target_commitish": "main",
        "name": "One",
        "body": "Notes",
        "url": page,
        "html_url": page,
        "tarball_url": "http://forge.test/owner/app/archive/v1.0.0.tar.gz",
        "zipball_url": "http://forge.test/owner/app/archive/v1.0.0.zip",
        "draft": False,
        "prerelease": False,
        "withdrawn": False,
        "withdrawn_reason": "",
        "required": False,
        "critical": False,
        "rollout": None,
        "created_at": "2026-01-01T00:01:00Z",
        "published_at": "2026-01-01T00:01:00Z",
        "assets": [],
    }


async def test_list_order_is_newest_first_then_id(make_client: Any, load: Any) -> None:
    same = "2026-05-05T05:05:05Z"
    await load(
        one_repo(
            [
                rel("a", 1) | {"created_at": same},
                rel("b", 1) | {"created_at": same},
                rel("c", 0),
                rel("d", 9),
            ]
        )
    )
    client = await make_client()
    assert await tags(client) == ["b", "a", "d", "c"]


async def test_list_total_count_and_link_headers(make_client: Any, load: Any) -> None:
    await load(one_repo([*many(7), rel("v9.0.0-rc.1", 50, prerelease=True)]))
    client = await make_client()
    resp = await client.get(LIST, params={"limit": "3", "page": "2", "prereleases": "1"})
    assert resp.headers["X-Total-Count"] == "8"
    assert "X-Total-Count" in resp.headers["Access-Control-Expose-Headers"]
    base = "http://forge.test/api/v2/repos/owner/app/releases?prereleases=true"
    assert resp.headers["Link"] == (
        f'<{base}&page=3&limit=3>; rel="next", <{base}&page=3&limit=3>; rel="last", '
        f'<{base}&page=1&limit=3>; rel="first", <{base}&page=1&limit=3>; rel="prev"'
    )
    resp = await client.get(LIST)
    assert resp.headers["X-Total-Count"] == "7"
    assert "Link" not in resp.headers  # one page only


async def test_list_of_a_repository_without_releases_is_empty(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client()
    resp = await client.get(LIST)
    assert resp.status == 200 and await resp.json() == []
    assert resp.headers["X-Total-Count"] == "0"


async def test_list_etag_and_if_none_match(make_client: Any, load: Any) -> None:
    await load(one_repo(many(2)))
    client = await make_client()
    resp = await client.get(LIST)
    etag = resp.headers["ETag"]
    again = await client.get(LIST, headers={"If-None-Match": etag})
    assert again.status == 304 and await again.read() == b""
    other = await client.get(LIST, headers={"If-None-Match": '"other"'})
    assert other.status == 200
