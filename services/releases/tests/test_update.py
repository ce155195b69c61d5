"""docs/releases.md "Update check rules" 1-9 over HTTP (GET .../releases/update)."""

from __future__ import annotations

import dataclasses
from typing import Any

from forge_common.config import Settings

from .support import UPDATE, error_of, one_repo, rel

MAC = {"platform": "darwin", "arch": "arm64"}


async def check(client: Any, **params: str) -> tuple[int, Any]:
    resp = await client.get(UPDATE, params=params)
    body = await resp.read()
    return resp.status, (await resp.json() if body else body)


async def test_update_rule_1_leading_v_is_removed(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip"), rel("v1.1.0", 2, "App-arm64.zip")]))
    client = await make_client()
    assert (await check(client, version="v1.0.0", **MAC))[1]["name"] == "v1.1.0"
    assert (await check(client, version="1.0.0", **MAC))[1]["name"] == "v1.1.0"


async def test_update_rule_1_invalid_version_is_val_invalid_input(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip")]))
    client = await make_client()
    for bad in ["abc", "1.0", "1", "v", "vv1.0.0", "1.0.0.0", "01.0.0", " 1.0.0", "1.0.0-"]:
        status, body = await check(client, version=bad, **MAC)
        assert status == 400, bad
        assert error_of(body) == ("ValInvalidInput", f"Invalid version format: {bad}"), bad
        assert body["error"]["status"] == 400


async def test_update_rule_1_missing_version_is_invalid_with_empty_value(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip")]))
    client = await make_client()
    for params in [MAC, {"version": "", **MAC}]:
        status, body = await check(client, **params)
        assert status == 400
        assert error_of(body) == ("ValInvalidInput", "Invalid version format: ")


async def test_update_rule_1_prerelease_and_build_versions_parse(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip")]))
    client = await make_client()
    assert (await check(client, version="1.0.0-beta.1", **MAC))[1]["name"] == "v1.0.0"
    assert (await check(client, version="0.9.0+build.5", **MAC))[1]["name"] == "v1.0.0"


async def test_update_rule_2_defaults_are_server_os_and_arch(
    make_client: Any, load: Any, settings: Settings
) -> None:
    assets = ("App-arm64.zip", "App-x64.zip", "App-x86_64.AppImage", "App-arm64.AppImage")
    await load(one_repo([rel("v1.0.0", 1, *assets)]))
    linux_x64 = await make_client()  # the test settings say linux / x64
    status, body = await check(linux_x64, version="0.1.0")
    assert status == 200 and body["url"].endswith("/App-x86_64.AppImage")
    mac_arm = await make_client(
        app_settings=dataclasses.replace(settings, server_os="darwin", server_arch="arm64")
    )
    status, body = await check(mac_arm, version="0.1.0")
    assert status == 200 and body["url"].endswith("/App-arm64.zip")
    # an empty value is the same as a missing one
    status, body = await check(mac_arm, version="0.1.0", platform="", arch="")
    assert body["url"].endswith("/App-arm64.zip")


async def test_update_rule_2_channel_defaults_to_stable(make_client: Any, load: Any) -> None:
    await load(
        one_repo(
            [
                rel("v1.0.0", 1, "App-arm64.zip"),
                rel("v1.1.0-beta.1", 2, "App-arm64.zip", prerelease=True),
            ]
        )
    )
    client = await make_client()
    assert (await check(client, version="0.1.0", **MAC))[1]["name"] == "v1.0.0"
    assert (await check(client, version="0.1.0", channel="stable", **MAC))[1]["name"] == "v1.0.0"


async def test_update_rule_3_only_the_first_50_releases_are_candidates(
    make_client: Any, load: Any
) -> None:
    # v9.0.0 is the highest version but the oldest: 51st in list order, so never examined
    releases = [rel("v9.0.0", 0, "App-arm64.zip")]
    releases += [rel(f"v1.0.{i}", 1 + i, "App-arm64.zip") for i in range(50)]
    await load(one_repo(releases))
    client = await make_client()
    status, body = await check(client, version="1.0.0", **MAC)
    assert status == 200 and body["name"] == "v1.0.49"


async def test_update_rule_3_50_counts_after_excluding_drafts_and_bare_tags(
    make_client: Any, load: Any
) -> None:
    releases = [rel("v9.0.0", 0, "App-arm64.zip")]
    releases += [rel(f"v1.0.{i}", 1 + i, "App-arm64.zip") for i in range(49)]
    # newer drafts and bare tags do not use up the 50
    releases += [rel(f"v8.0.{i}", 100 + i, "App-arm64.zip", draft=True) for i in range(3)]
    releases += [rel(f"v7.0.{i}", 200 + i, tag_only=True) for i in range(3)]
    await load(one_repo(releases))
    client = await make_client()
    status, body = await check(client, version="1.0.0", **MAC)
    assert status == 200 and body["name"] == "v9.0.0"


async def test_update_rule_3_drafts_and_bare_tags_are_never_offered(
    make_client: Any, load: Any
) -> None:
    await load(
        one_repo(
            [
                rel("v1.0.0", 1, "App-arm64.zip"),
                rel("v2.0.0", 2, "App-arm64.zip", draft=True),
                rel("v3.0.0", 3, tag_only=True),
            ]
        )
    )
    client = await make_client()
    for channel in ["stable", "beta"]:
        _, body = await check(client, version="0.1.0", channel=channel, **MAC)
        assert body["name"] == "v1.0.0"
    assert (await check(client, version="1.0.0", channel="beta", **MAC))[0] == 204


async def test_update_rule_3_prereleases_only_outside_stable(make_client: Any, load: Any) -> None:
    await load(
        one_repo(
            [
                rel("v1.0.0", 1, "App-arm64.zip"),
                rel("v1.1.0-beta.1", 2, "App-arm64.zip", prerelease=True),
            ]
        )
    )
    client = await make_client()
    assert (await check(client, version="1.0.0", channel="stable", **MAC))[0] == 204
    for channel in ["beta", "nightly", "anything"]:
        status, body = await check(client, version="1.0.0", channel=channel, **MAC)
        assert status == 200 and body["name"] == "v1.1.0-beta.1"


async def test_update_rule_4_highest_strictly_greater_version_wins(
    make_client: Any, load: Any
) -> None:
    # created out of version order: the highest version wins, not the newest
    await load(
        one_repo(
            [
                rel("v1.0.0", 1, "App-arm64.zip"),
                rel("v3.0.0", 2, "App-arm64.zip"),
                rel("v2.0.0", 3, "App-arm64.zip"),
            ]
        )
    )
    client = await make_client()
    assert (await check(client, version="1.0.0", **MAC))[1]["name"] == "v3.0.0"
    assert (await check(client, version="2.5.0", **MAC))[1]["name"] == "v3.0.0"
    # equal is not newer
    assert (await check(client, version="3.0.0", **MAC))[0] == 204
    assert (await check(client, version="v3.0.0", **MAC))[0] == 204


async def test_update_rule_4_semver_precedence_and_unparsable_tags_skipped(
    make_client: Any, load: Any
) -> None:
    await load(
        one_repo(
            [
                rel("v1.10.0", 1, "App-arm64.zip"),
                rel("v1.9.0", 2, "App-arm64.zip"),
                rel("nightly", 3, "App-arm64.zip"),
                rel("v99", 4, "App-arm64.zip"),
                rel("2.0.0-rc.1", 5, "App-arm64.zip", prerelease=True),
            ]
        )
    )
    client = await make_client()
    # 1.10.0 > 1.9.0 numerically (not as text); tags that do not parse are skipped
    assert (await check(client, version="1.0.0", **MAC))[1]["name"] == "v1.10.0"
    # a tag without v parses too; 2.0.0-rc.1 > 1.10.0
    assert (await check(client, version="1.0.0", channel="beta", **MAC))[1]["name"] == "2.0.0-rc.1"


async def test_update_rule_5_no_newer_release_is_204_with_empty_body(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip")]))
    client = await make_client()
    resp = await client.get(UPDATE, params={"version": "1.0.0", **MAC})
    assert resp.status == 204
    assert await resp.read() == b""
    assert "Content-Type" not in resp.headers
    # a repository without any release answers the same
    await load({"repos": [{"owner": "owner", "name": "empty"}]})
    resp = await client.get(
        "/api/v2/repos/owner/empty/releases/update", params={"version": "0.0.1", **MAC}
    )
    assert resp.status == 204 and await resp.read() == b""


async def test_update_rule_6_first_matching_pattern_wins_over_attachment_order(
    make_client: Any, load: Any
) -> None:
    await load(
        one_repo(
            [
                rel(
                    "v1.0.0",
                    1,
                    "App-universal.zip",
                    "App-x64.zip",
                    "App-arm64.zip",
                    "App-ARM64-second.zip",
                )
            ]
        )
    )
    client = await make_client()
    _, body = await check(client, version="0.1.0", platform="darwin", arch="arm64")
    assert body["url"].endswith("/App-arm64.zip")  # arm64.zip before universal.zip
    _, body = await check(client, version="0.1.0", platform="macos", arch="x64")
    assert body["url"].endswith("/App-x64.zip")


async def test_update_rule_6_names_lower_cased_and_first_asset_within_pattern(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-B-X64.ZIP", "App-A-x64.zip")]))
    client = await make_client()
    status, body = await check(client, version="0.1.0", platform="darwin", arch="x64")
    assert status == 200 and body["url"].endswith("/App-B-X64.ZIP")


async def test_update_rule_7_no_matching_asset_is_204(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-x64.zip", "notes.txt")]))
    client = await make_client()
    status, body = await check(client, version="0.1.0", platform="linux", arch="x64")
    assert (status, body) == (204, b"")
    # the Windows arm64 list has no generic `.exe`
    await load(
        {
            "repos": [
                {"owner": "owner", "name": "win", "releases": [rel("v1.0.0", 1, "App-Setup.exe")]}
            ]
        }
    )
    resp = await client.get(
        "/api/v2/repos/owner/win/releases/update",
        params={"version": "0.1.0", "platform": "windows", "arch": "arm64"},
    )
    assert resp.status == 204


async def test_update_rule_7_unknown_platform_is_204(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-x64.zip", "App.exe", "App.AppImage")]))
    client = await make_client()
    for platform in ["freebsd", "android", "Darwin", "WINDOWS", "osx", "mac"]:
        status, body = await check(client, version="0.1.0", platform=platform, arch="x64")
        assert (status, body) == (204, b""), platform


async def test_update_rule_8_response_fields(make_client: Any, load: Any) -> None:
    release = rel("v1.2.0", 1, "App 1.2.0-arm64.zip")
    release["note"] = "## Fixes\n- faster"
    release["created_at"] = "2026-01-02T03:04:05.678Z"
    await load(one_repo([release]))
    client = await make_client()
    status, body = await check(client, version="1.0.0", **MAC)
    assert status == 200
    assert body == {
        "url": "http://forge.test/owner/app/releases/download/v1.2.0/App%201.2.0-arm64.zip",
        "name": "v1.2.0",
        "notes": "## Fixes\n- faster",
        "pub_date": "2026-01-02T03:04:05Z",
        "platform": {"size": 10},
    }
    assert "mandatory" not in body  # omitted when false; the check never sets it


async def test_update_rule_8_url_downloads_the_asset(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.2.0", 1, "App-arm64.zip")]))
    client = await make_client()
    _, body = await check(client, version="1.0.0", **MAC)
    path = body["url"].removeprefix("http://forge.test")
    resp = await client.get(path)
    assert resp.status == 200 and len(await resp.read()) == body["platform"]["size"]


async def test_update_rule_9_windows_releases_and_nupkg_urls_last_match(
    make_client: Any, load: Any
) -> None:
    assets = ("a-full.nupkg", "RELEASES", "App-Setup.exe", "b-delta.NUPKG", "releases")
    await load(one_repo([rel("v1.0.0", 1, *assets)]))
    client = await make_client()
    base = "http://forge.test/owner/app/releases/download/v1.0.0/"
    for platform in ["windows", "win32"]:
        status, body = await check(client, version="0.1.0", platform=platform, arch="x64")
        assert status == 200
        assert body["url"] == base + "App-Setup.exe"
        assert body["platform"] == {
            "releases_url": base + "releases",  # last of RELEASES / releases
            "nupkg_url": base + "b-delta.NUPKG",  # last .nupkg, case-insensitive
            "size": 12,
        }


async def test_update_rule_9_windows_members_omitted_when_absent_and_never_elsewhere(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-Setup.exe", "App.AppImage", "RELEASES", "x.nupkg")]))
    client = await make_client()
    _, linux = await check(client, version="0.1.0", platform="linux", arch="x64")
    assert linux["platform"] == {"size": 11}
    await load(
        {
            "repos": [
                {"owner": "owner", "name": "bare", "releases": [rel("v1.0.0", 1, "App-Setup.exe")]}
            ]
        }
    )
    resp = await client.get(
        "/api/v2/repos/owner/bare/releases/update",
        params={"version": "0.1.0", "platform": "windows"},
    )
    assert (await resp.json())["platform"] == {"size": 10}


async def test_update_empty_asset_size_is_omitted(make_client: Any, load: Any) -> None:
    release = rel("v1.0.0", 1)
    release["assets"] = [{"name": "App-arm64.zip", "content": ""}]
    await load(one_repo([release]))
    client = await make_client()
    _, body = await check(client, version="0.1.0", **MAC)
    assert body["platform"] == {}  # present on a 200, with every empty member omitted


async def test_update_unknown_query_parameters_are_ignored(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App-arm64.zip")]))
    client = await make_client()
    status, body = await check(client, version="0.1.0", foo="bar", id="x", **MAC)
    assert status == 200 and body["name"] == "v1.0.0"
