"""docs/releases.md get rules 1-2 (GET .../releases/{tag}) and latest rules 1-2
(GET .../releases/latest)."""

from __future__ import annotations

from typing import Any

from .support import auth, error_of, one_repo, rel

BASE = "/api/v2/repos/owner/app/releases"


async def get(client: Any, path: str, caller: str = "anonymous", **params: str) -> tuple[int, Any]:
    resp = await client.get(f"{BASE}/{path}", params=params, headers=auth(caller))
    return resp.status, await resp.json()


async def test_get_rule_1_positive_int64_is_an_id_else_a_tag(
    make_client: Any, load: Any, db: Any
) -> None:
    ids = await load(one_repo([rel("v1.0.0", 1), rel("1", 2), rel("0", 3), rel("+7", 4)]))
    await load({"repos": [{"owner": "owner", "name": "other", "releases": [rel("v5.0.0", 1)]}]})
    client = await make_client()
    repo_id = ids.repos[("owner", "app")]
    by_tag = {
        r["tag"]: r["id"]
        for r in await db.fetch("SELECT id, tag FROM releases.releases WHERE repo_id=$1", repo_id)
    }
    status, body = await get(client, str(by_tag["v1.0.0"]))
    assert status == 200 and body["tag_name"] == "v1.0.0"
    status, body = await get(client, "v1.0.0")
    assert status == 200 and body["id"] == by_tag["v1.0.0"]
    # "1" is an id, not the tag "1"
    status, body = await get(client, "1")
    assert status == 200 and body["id"] == 1 and body["tag_name"] == "v1.0.0"
    # 0 and signed or oversized numbers are not positive int64 ids: tags
    assert (await get(client, "0"))[1]["tag_name"] == "0"
    assert (await get(client, "9223372036854775808"))[0] == 404
    assert (await get(client, "-1"))[0] == 404
    # an id of another repository's release is not found here
    other = await db.fetchval("SELECT id FROM releases.releases WHERE tag = 'v5.0.0'")
    status, body = await get(client, str(other))
    assert status == 404 and error_of(body) == ("ReleaseNotFound", "Release not found")


async def test_get_rule_2_missing_release_is_404(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1), rel("v0.1.0", 2, tag_only=True)]))
    client = await make_client()
    for path in ["v9.9.9", "999999", "v0.1.0", "V1.0.0", "v1.0.0%20"]:
        status, body = await get(client, path)
        assert status == 404, path
        assert error_of(body) == ("ReleaseNotFound", "Release not found"), path


async def test_get_tag_with_a_slash_in_it(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("release/1.0", 1, "a.zip")]))
    client = await make_client()
    status, body = await get(client, "release%2F1.0")
    assert status == 200 and body["tag_name"] == "release/1.0"
    assert body["assets"][0]["browser_download_url"].endswith("/download/release%2F1.0/a.zip")


async def test_get_draft_only_for_those_who_may_publish(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v2.0.0", 1, draft=True)]))
    client = await make_client()
    assert (await get(client, "v2.0.0"))[0] == 404
    assert (await get(client, "v2.0.0", "stranger"))[0] == 404
    status, body = await get(client, "v2.0.0", "owner")
    assert status == 200 and body["draft"] is True


async def test_latest_rule_1_channel_stable_excludes_prereleases(
    make_client: Any, load: Any
) -> None:
    await load(
        one_repo(
            [
                rel("v1.0.0", 1),
                rel("v1.1.0-beta.1", 2, prerelease=True),
                rel("v3.0.0", 3, draft=True),
                rel("v4.0.0", 4, tag_only=True),
            ]
        )
    )
    client = await make_client()
    assert (await get(client, "latest"))[1]["tag_name"] == "v1.0.0"
    assert (await get(client, "latest", channel="stable"))[1]["tag_name"] == "v1.0.0"
    for channel in ["beta", "x"]:
        assert (await get(client, "latest", channel=channel))[1]["tag_name"] == "v1.1.0-beta.1"
    # drafts are excluded even for the owner
    assert (await get(client, "latest", "owner", channel="beta"))[1]["tag_name"] == "v1.1.0-beta.1"


async def test_latest_rule_2_first_in_list_order_not_highest_version(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v9.0.0", 1), rel("v1.0.0", 2, "a.zip")]))
    client = await make_client()
    status, body = await get(client, "latest")
    assert status == 200 and body["tag_name"] == "v1.0.0"
    assert [a["name"] for a in body["assets"]] == ["a.zip"]


async def test_latest_rule_2_none_is_404_no_releases_found(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0-rc.1", 1, prerelease=True), rel("v2.0.0", 2, draft=True)]))
    client = await make_client()
    status, body = await get(client, "latest")
    assert status == 404
    assert error_of(body) == ("NoReleasesFound", "No releases found")
    assert body["error"]["status"] == 404 and body["error"]["request_id"]
