"""The Velopack feed (feeds/velopack.py, docs/releases.md "Velopack"): `releases.{channel}.json`
built from the `.nuspec` inside each published `.nupkg` (never its file name), with exactly the
nine keys Velopack's client reads and never a null; deltas only on a published base; staged
rollouts bucketed on `stagingId`; drafts never; the packages served at the feed's base URL; a
private repository read with an update key in `Authorization`. Velopack's own client runs against
it in tests-e2e/clients/test_velopack.py."""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from datetime import UTC, datetime
from typing import Any

from forge_common.keys import DB_POOL
from forge_releases.console.updaters import updaters_offered
from forge_releases.feeds.velopack import bucket_of
from forge_releases.models import Asset, Release
from forge_releases.read.update_check import repo_releases
from forge_testing.velopack import nupkg
from forge_testing.waiting import eventually

from .support import TOKENS, one_repo

API = "/api/v2/repos/owner/app/releases"
BASE = "/owner/app/velopack"
OWNER = {"Authorization": f"token {TOKENS['owner']}"}
KEYS = ("PackageId", "Version", "Type", "FileName", "SHA1", "SHA256", "Size")
NINE = [*KEYS, "NotesMarkdown", "NotesHtml"]


async def publish(client: Any, tag: str, files: dict[str, bytes], **flags: Any) -> int:
    """A release published through the API with these files (a draft with `draft=True`)."""
    resp = await client.post(API, json={"tag_name": tag, "draft": True}, headers=OWNER)
    assert resp.status == 201, await resp.text()
    release_id: int = (await resp.json())["id"]
    for name, data in files.items():
        resp = await client.post(
            f"{API}/{release_id}/assets?name={name}",
            data=data,
            headers={**OWNER, "Content-Type": "application/octet-stream"},
        )
        assert resp.status == 201, await resp.text()
    if not flags.get("draft"):
        body = {"draft": False, **{k: v for k, v in flags.items() if k != "draft"}}
        resp = await client.patch(f"{API}/{release_id}", json=body, headers=OWNER)
        assert resp.status == 200, await resp.text()
    return release_id


async def feed(client: Any, channel: str = "linux", query: str = "", **headers: str) -> Any:
    resp = await client.get(f"{BASE}/releases.{channel}.json{query}", headers=headers)
    assert resp.status == 200, await resp.text()
    raw = await resp.read()
    assert not raw.startswith(b"\xef\xbb\xbf")  # a BOM makes the client reject the feed
    assert resp.content_type == "application/json"
    return await resp.json()


def listed(body: Any) -> list[tuple[str, str, str]]:
    return [(a["Version"], a["Type"], a["FileName"]) for a in body["Assets"]]


def staging_id(bucket: int) -> str:
    """A stagingId in `bucket` (bytes 12-15 of the UUID, as a fraction of 2^32-1)."""
    value = int(0xFFFFFFFF * (bucket + 0.5) / 100)
    return str(uuid.UUID(bytes=bytes(12) + value.to_bytes(4, "big")))


async def test_the_feed_lists_the_channels_packages_with_exactly_the_nine_keys(
    make_client: Any, load: Any
) -> None:
    # a world-loaded .nupkg that is not a zip, and a Squirrel.Windows package: skipped
    await load(
        one_repo([{"tag": "v0.9.0", "assets": [{"name": "Old-0.9.0-full.nupkg", "content": "x"}]}])
    )
    client = await make_client(wait_cache=True)
    full = nupkg("AccApp", "1.1.0", "linux", notes="Fixes the **crash**", notes_html="<p>x</p>")
    await publish(client, "v1.0.0", {"AccApp-1.0.0-linux-full.nupkg": nupkg("AccApp", "1.0.0")})
    await publish(
        client,
        "v1.1.0",
        {
            # the file name says linux, the nuspec says beta: the nuspec decides
            "AccApp-1.1.0-linux-full.nupkg": nupkg("AccApp", "1.1.0", "beta"),
            "AccApp-1.1.0-full.nupkg": full,
            "Squirrel-1.1.0-full.nupkg": nupkg("Squirrel", "1.1.0", None),
            "NotSemver-1.1-full.nupkg": nupkg("NotSemver", "1.1", "linux"),
        },
    )
    await publish(
        client, "v1.2.0", {"AccApp-1.2.0-full.nupkg": nupkg("AccApp", "1.2.0")}, draft=True
    )

    body = await feed(client, "linux", "?localVersion=1.0.0&id=AccApp")
    assert listed(body) == [
        ("1.1.0", "Full", "AccApp-1.1.0-full.nupkg"),
        ("1.0.0", "Full", "AccApp-1.0.0-linux-full.nupkg"),
    ]
    top = body["Assets"][0]
    assert list(top) == NINE
    assert all(value is not None for entry in body["Assets"] for value in entry.values())
    assert top["SHA1"] == hashlib.sha1(full, usedforsecurity=False).hexdigest().upper()
    assert top["SHA256"] == hashlib.sha256(full).hexdigest().upper()
    assert (top["Size"], top["PackageId"]) == (len(full), "AccApp")
    assert (top["NotesMarkdown"], top["NotesHtml"]) == ("Fixes the **crash**", "<p>x</p>")
    assert listed(await feed(client, "beta")) == [
        ("1.1.0", "Full", "AccApp-1.1.0-linux-full.nupkg")
    ]
    assert await feed(client, "win") == {"Assets": []}  # no package: no update, never a 404

    # each .nupkg was read once and kept (those uploaded at upload, the draft's too; the world's
    # by the feed); the fakes are kept as "no Velopack package"
    rows = await client.app[DB_POOL].fetch(
        "SELECT package_id, channel FROM releases.velopack_packages ORDER BY asset_id"
    )
    kept = [("", ""), ("AccApp", "linux"), ("AccApp", "beta"), ("AccApp", "linux"), ("", "")]
    kept += [("", ""), ("AccApp", "linux")]  # the last: the draft's, read at upload
    assert sorted((r["package_id"], r["channel"]) for r in rows) == sorted(kept)


async def test_a_package_is_read_at_upload_from_its_own_nuspec(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client()
    # the file name says another id, version and channel: the package's .nuspec is what is kept
    package = nupkg("AccApp", "1.0.0", "osx", notes="First")
    await publish(client, "v1.0.0", {"Other-9.9.9-win-full.nupkg": package}, draft=True)
    rows = await client.app[DB_POOL].fetch(
        "SELECT package_id, version, channel, notes_markdown FROM releases.velopack_packages"
    )  # before any feed asked, for a draft that no feed lists
    assert [tuple(row) for row in rows] == [("AccApp", "1.0.0", "osx", "First")]


async def test_packages_download_at_the_feeds_base_url(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client(wait_cache=True)
    data = nupkg("AccApp", "1.0.0", app=bytes(range(256)) * 64)
    await publish(client, "v1.0.0", {"AccApp-1.0.0-full.nupkg": data})
    await publish(client, "v1.1.0", {"AccApp-1.1.0-full.nupkg": b"draft"}, draft=True)
    resp = await client.get(f"{BASE}/AccApp-1.0.0-full.nupkg")
    assert resp.status == 200 and await resp.read() == data
    resp = await client.get(f"{BASE}/AccApp-1.0.0-full.nupkg", headers={"Range": "bytes=2-9"})
    assert resp.status == 206 and await resp.read() == data[2:10]
    for missing in ("AccApp-1.1.0-full.nupkg", "nothing.nupkg", "..%2Fx"):
        assert (await client.get(f"{BASE}/{missing}")).status == 404, missing
    # counted like every download: the full one, not the range
    release = await (await client.get(f"{API}/v1.0.0")).json()
    assert [a["download_count"] for a in release["assets"]] == [1]


async def test_a_delta_is_listed_only_when_the_full_below_it_is(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([]))
    client = await make_client(wait_cache=True)

    def both(version: str) -> dict[str, bytes]:
        return {
            f"App-{version}-full.nupkg": nupkg("App", version),
            f"App-{version}-delta.nupkg": nupkg("App", version),
        }

    await publish(client, "v1.0.0", {"App-1.0.0-full.nupkg": nupkg("App", "1.0.0")})
    await publish(client, "v1.1.0", both("1.1.0"))
    # 1.2.0 published without its Full: 1.3.0's delta (built against it) cannot apply
    await publish(client, "v1.2.0", {"App-1.2.0-delta.nupkg": nupkg("App", "1.2.0")})
    await publish(client, "v1.3.0", both("1.3.0"))
    assert listed(await feed(client)) == [
        ("1.3.0", "Full", "App-1.3.0-full.nupkg"),
        ("1.2.0", "Delta", "App-1.2.0-delta.nupkg"),
        ("1.1.0", "Full", "App-1.1.0-full.nupkg"),
        ("1.1.0", "Delta", "App-1.1.0-delta.nupkg"),
        ("1.0.0", "Full", "App-1.0.0-full.nupkg"),
    ]


async def test_a_staged_release_is_bucketed_on_the_staging_id(make_client: Any, load: Any) -> None:
    await load(one_repo([]))
    client = await make_client(wait_cache=True)
    await publish(client, "v1.0.0", {"App-1.0.0-full.nupkg": nupkg("App", "1.0.0")})
    await publish(
        client,
        "v1.1.0",
        {
            "App-1.1.0-full.nupkg": nupkg("App", "1.1.0"),
            "App-1.1.0-delta.nupkg": nupkg("App", "1.1.0"),
        },
        rollout=30,
    )
    await publish(client, "v1.2.0", {"App-1.2.0-delta.nupkg": nupkg("App", "1.2.0")})
    inside = await feed(client, query=f"?localVersion=1.0.0&stagingId={staging_id(29)}")
    assert [v for v, *_ in listed(inside)] == ["1.2.0", "1.1.0", "1.1.0", "1.0.0"]
    for query in (
        f"?stagingId={staging_id(30)}",
        f"?stagingId={staging_id(99)}",
        "",
        "?stagingId=x",
    ):
        # held back, and the delta above it (built against it) with it
        assert listed(await feed(client, query=query)) == [
            ("1.0.0", "Full", "App-1.0.0-full.nupkg")
        ], query
    # kept per bucket (never per install), under the key the route makes (asked again until the
    # publications' change notifications have all arrived, which drop what was kept before)
    repo_id = await client.app[DB_POOL].fetchval(
        "SELECT id FROM core.repositories WHERE name = 'app'"
    )
    buckets = {29: "29", 30: "30", 99: "99"}

    async def kept_per_bucket() -> bool:
        for bucket in buckets:
            await feed(client, query=f"?stagingId={staging_id(bucket)}&localVersion=1.0.0")
        kept = (await repo_releases(client.app, repo_id)).answers
        # and per band of running versions (`*`: no required release above 1.0.0)
        return {f"feed velopack linux {b} *" for b in buckets.values()} <= set(kept)

    await eventually(kept_per_bucket, what="an answer kept per bucket")


async def test_a_private_repository_is_read_with_an_update_key_in_authorization(
    make_client: Any, load: Any
) -> None:
    await load(one_repo([], private=True))
    client = await make_client(wait_cache=True)
    data = nupkg("App", "1.0.0")
    await publish(client, "v1.0.0", {"App-1.0.0-full.nupkg": data})
    resp = await client.post(
        "/api/v2/repos/owner/app/update_keys", json={"name": "velopack"}, headers=OWNER
    )
    key = (await resp.json())["key"]
    assert key.startswith("forge_uk_")
    header = {"Authorization": f"token {key}"}
    body = await feed(client, **header)
    assert listed(body) == [("1.0.0", "Full", "App-1.0.0-full.nupkg")]
    resp = await client.get(f"{BASE}/App-1.0.0-full.nupkg", headers=header)
    assert resp.status == 200 and await resp.read() == data
    # .NET's client keeps `?key=` on the feed and on every package
    assert listed(await feed(client, query=f"?key={key}")) == listed(body)
    resp = await client.get(f"{BASE}/App-1.0.0-full.nupkg?key={key}")
    assert resp.status == 200 and await resp.read() == data
    # without a key: refused; a wrong key answers as a missing repository
    assert (await client.get(f"{BASE}/releases.linux.json")).status == 401
    assert (await client.get(f"{BASE}/App-1.0.0-full.nupkg")).status == 401
    wrong = {"Authorization": "token forge_uk_wrong"}
    assert (await client.get(f"{BASE}/releases.linux.json", headers=wrong)).status == 404
    assert (await client.get(f"{BASE}/App-1.0.0-full.nupkg", headers=wrong)).status == 404
    # keys are read-only: never a write
    resp = await client.post(API, json={"tag_name": "v9.0.0"}, headers=header)
    assert resp.status == 401


def test_the_console_names_velopack_among_the_updaters_offered_a_package() -> None:
    release = Release(1, 1, "v1.0.0", "", "", "", False, False, datetime(2026, 1, 1, tzinfo=UTC))
    asset = Asset(1, 1, "App-1.0.0-linux-full.nupkg", 3, "", "0" * 64, "", 0, release.created_at)
    offered = updaters_offered(dataclasses.replace(release, assets=(asset,)))
    assert any(label.startswith("Velopack") for label in offered), offered
    assert not any(label.startswith("Velopack") for label in updaters_offered(release))


async def test_installs_below_a_required_release_are_given_the_feed_up_to_it(
    make_client: Any, load: Any
) -> None:
    """The client installs the newest Full listed: below the required 1.5.0 the feed stops there,
    on it the newest is listed; the answers are kept per band of running versions, not per
    version (docs/release-safety.md)."""
    await load(one_repo([]))
    client = await make_client(wait_cache=True)
    for version in ("1.0.0", "1.2.0", "1.5.0", "2.0.0"):
        files = {f"App-{version}-full.nupkg": nupkg("App", version)}
        await publish(client, f"v{version}", files, required=version == "1.5.0")

    def newest(body: Any) -> str:
        return str(body["Assets"][0]["Version"]) if body["Assets"] else ""

    query = "?id=App&stagingId=" + staging_id(10) + "&localVersion="
    for running, offered in (("1.0.0", "1.5.0"), ("1.2.0", "1.5.0"), ("1.5.0", "2.0.0")):
        assert newest(await feed(client, query=query + running)) == offered, running
    assert newest(await feed(client, query=query + "2.0.0")) == "2.0.0"
    # no version told (the .NET client without its query), or none readable: the newest
    assert newest(await feed(client)) == "2.0.0"
    assert newest(await feed(client, query="?localVersion=not-a-version")) == "2.0.0"
    repo_id = await client.app[DB_POOL].fetchval("SELECT id FROM core.repositories")
    kept = sorted((await repo_releases(client.app, repo_id)).answers)
    bucket = f"feed velopack linux {bucket_of({'stagingId': staging_id(10)})}"
    assert kept == sorted([f"{bucket} <1.5.0", f"{bucket} *", "feed velopack linux - *"]), kept
    # a repeat is answered from the kept answer of its band, before routing too
    again = await client.get(f"{BASE}/releases.linux.json{query}1.2.0")
    assert (await again.json())["Assets"][0]["Version"] == "1.5.0"
