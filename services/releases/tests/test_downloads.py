"""Downloads at the address the API hands out: bytes, headers, ranges, ETags, the case-insensitive
fallback, bad names, the latest-release address and download counting."""

from __future__ import annotations

import hashlib
from typing import Any

from forge_common.keys import DB_POOL
from forge_releases.keys import DOWNLOAD_COUNTER
from forge_releases.storage import deterministic_bytes

from .support import auth, error_of, one_repo, rel

CONTENT = "0123456789abcdefghij"  # 20 bytes
URL = "/owner/app/releases/download/v1.0.0/App-x64.zip"


def world(**repo: Any) -> dict[str, Any]:
    release = rel("v1.0.0", 1)
    release["assets"] = [
        {"name": "App-x64.zip", "content": CONTENT},
        {"name": "RELEASES", "content": "SHA1 App-1.0.0-full.nupkg 20"},
        {"name": "big.bin", "size": 3_000_000},
        {"name": "empty.txt", "content": ""},
        {"name": "with space+plus.zip", "content": "x"},
    ]
    newer = rel("v1.1.0-beta.1", 2, prerelease=True)
    newer["assets"] = [{"name": "App-x64.zip", "content": "beta"}]
    return one_repo([release, newer], **repo)


async def test_download_bytes_and_headers(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.get(URL)
    assert resp.status == 200
    assert await resp.read() == CONTENT.encode()
    assert resp.headers["Content-Length"] == "20"
    assert resp.headers["Content-Type"] == "application/octet-stream"
    assert resp.headers["ETag"] == '"' + hashlib.sha256(CONTENT.encode()).hexdigest() + '"'
    assert resp.headers["Last-Modified"] == "Thu, 01 Jan 2026 00:01:00 GMT"
    assert resp.headers["Accept-Ranges"] == "bytes"
    assert resp.headers["Cache-Control"].startswith("public")
    assert resp.headers["Content-Disposition"] == (
        "attachment; filename=\"App-x64.zip\"; filename*=UTF-8''App-x64.zip"
    )
    assert "X-Request-Id" in resp.headers


async def test_download_large_file_streams_every_byte(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.get("/owner/app/releases/download/v1.0.0/big.bin")
    assert resp.status == 200
    body = await resp.read()
    assert body == b"".join(deterministic_bytes("big.bin", 3_000_000))


async def test_download_url_from_the_api_works(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    release = await (await client.get("/api/v2/repos/owner/app/releases/v1.0.0")).json()
    for asset in release["assets"]:
        path = asset["browser_download_url"].removeprefix("http://forge.test")
        resp = await client.get(path)
        assert resp.status == 200, path
        assert len(await resp.read()) == asset["size"]


async def test_download_if_none_match_is_304(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    etag = (await client.get(URL)).headers["ETag"]
    for header in [etag, f"W/{etag}", f'"nope", {etag}', "*"]:
        resp = await client.get(URL, headers={"If-None-Match": header})
        assert resp.status == 304, header
        assert await resp.read() == b""
        assert resp.headers["ETag"] == etag
    assert (await client.get(URL, headers={"If-None-Match": '"nope"'})).status == 200


async def test_download_if_modified_since(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    later = {"If-Modified-Since": "Fri, 02 Jan 2026 00:00:00 GMT"}
    assert (await client.get(URL, headers=later)).status == 304
    earlier = {"If-Modified-Since": "Wed, 31 Dec 2025 00:00:00 GMT"}
    assert (await client.get(URL, headers=earlier)).status == 200
    assert (await client.get(URL, headers={"If-Modified-Since": "garbage"})).status == 200


async def test_download_single_range_is_206(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    cases = {
        "bytes=0-4": (b"01234", "bytes 0-4/20"),
        "bytes=10-": (b"abcdefghij", "bytes 10-19/20"),
        "bytes=-3": (b"hij", "bytes 17-19/20"),
        "bytes=18-100": (b"ij", "bytes 18-19/20"),
        "bytes=-100": (CONTENT.encode(), "bytes 0-19/20"),
    }
    for header, (body, content_range) in cases.items():
        resp = await client.get(URL, headers={"Range": header})
        assert resp.status == 206, header
        assert await resp.read() == body, header
        assert resp.headers["Content-Range"] == content_range
        assert resp.headers["Content-Length"] == str(len(body))


async def test_download_unsatisfiable_range_is_416(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    for header in ["bytes=20-", "bytes=25-30", "bytes=-0"]:
        resp = await client.get(URL, headers={"Range": header})
        assert resp.status == 416, header
        assert resp.headers["Content-Range"] == "bytes */20"
    resp = await client.get(
        "/owner/app/releases/download/v1.0.0/empty.txt", headers={"Range": "bytes=0-"}
    )
    assert resp.status == 416


async def test_download_ignored_ranges_send_everything(make_client: Any, load: Any) -> None:
    """Several ranges, other units and malformed headers: the whole file (RFC 9110 allows it)."""
    await load(world())
    client = await make_client()
    for header in ["bytes=0-1,5-6", "items=0-1", "bytes=5-2", "bytes=a-b", "bytes", "0-5"]:
        resp = await client.get(URL, headers={"Range": header})
        assert resp.status == 200, header
        assert await resp.read() == CONTENT.encode()


async def test_download_if_range_mismatch_sends_everything(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    etag = (await client.get(URL)).headers["ETag"]
    resp = await client.get(URL, headers={"Range": "bytes=0-1", "If-Range": etag})
    assert resp.status == 206
    resp = await client.get(URL, headers={"Range": "bytes=0-1", "If-Range": '"old"'})
    assert resp.status == 200 and await resp.read() == CONTENT.encode()


async def test_download_name_falls_back_to_case_insensitive(make_client: Any, load: Any) -> None:
    """Squirrel.Windows retries a failed download with the URL lower-cased."""
    await load(world())
    client = await make_client()
    for path in [
        "/owner/app/releases/download/v1.0.0/app-x64.zip",
        "/owner/app/releases/download/V1.0.0/APP-X64.ZIP",
        "/OWNER/APP/releases/download/v1.0.0/releases",
    ]:
        resp = await client.get(path)
        assert resp.status == 200, path
    resp = await client.get("/owner/app/releases/download/v1.0.0/releases")
    assert (await resp.read()).startswith(b"SHA1")


async def test_download_name_with_special_characters(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.get("/owner/app/releases/download/v1.0.0/with%20space%2Bplus.zip")
    assert resp.status == 200 and await resp.read() == b"x"


async def test_download_bad_names_are_404(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    for name in ["..", "%2E%2E", "a%2Fb", "..%2Fsecret", "a%00b", "App-x64.zip%00", "%2e%2e%2f"]:
        resp = await client.get(f"/owner/app/releases/download/v1.0.0/{name}")
        assert resp.status == 404, name
        assert resp.headers["Content-Type"].startswith("application/json")


async def test_download_missing_release_or_asset_is_404(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.get("/owner/app/releases/download/v9/App-x64.zip")
    assert error_of(await resp.json()) == ("ReleaseNotFound", "Release not found")
    resp = await client.get("/owner/app/releases/download/v1.0.0/nothing.zip")
    assert resp.status == 404


async def test_latest_download_is_the_latest_stable_release(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.get("/owner/app/releases/latest/download/App-x64.zip")
    assert resp.status == 200 and await resp.read() == CONTENT.encode()  # not the beta
    resp = await client.get("/owner/app/releases/latest/download/RELEASES")
    assert resp.status == 200 and (await resp.read()).startswith(b"SHA1")
    resp = await client.get("/owner/app/releases/latest/download/nothing")
    assert resp.status == 404


async def test_head_sends_headers_only(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    resp = await client.head(URL)
    assert resp.status == 200 and resp.headers["Content-Length"] == "20"
    assert await resp.read() == b""


async def asset_counts(client: Any) -> dict[str, int]:
    release = await (await client.get("/api/v2/repos/owner/app/releases/v1.0.0")).json()
    return {a["name"]: a["download_count"] for a in release["assets"]}


async def stored_count(db: Any, name: str) -> int:
    count: int = await db.fetchval(
        "SELECT sum(download_count) FROM releases.assets WHERE name = $1", name
    )
    return count


async def test_download_counts_each_completed_full_download_once(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    client = await make_client()
    for _ in range(3):
        assert await (await client.get(URL)).read() == CONTENT.encode()
    await (await client.get(URL, headers={"Range": "bytes=0-1"})).read()  # partial: not counted
    await (await client.head(URL)).read()  # no body: not counted
    full = await client.get(URL)  # 4th full download
    await full.read()
    etag = full.headers["ETag"]
    await (await client.get(URL, headers={"If-None-Match": etag})).read()  # 304: not counted
    await (await client.get("/owner/app/releases/latest/download/app-x64.zip")).read()  # 5th
    # visible in the API at once, before the batch is written
    assert (await asset_counts(client))["App-x64.zip"] == 5
    written = await client.app[DOWNLOAD_COUNTER].flush(client.app[DB_POOL])
    assert written == 5
    assert await stored_count(db, "App-x64.zip") == 5
    assert (await asset_counts(client))["App-x64.zip"] == 5  # not counted twice


async def test_download_counts_survive_a_clean_shutdown(
    make_client: Any, load: Any, db: Any
) -> None:
    await load(world())
    client = await make_client()
    for _ in range(4):
        await (await client.get("/owner/app/releases/download/v1.0.0/RELEASES")).read()
    await client.close()  # cleanup writes what is pending
    assert await stored_count(db, "RELEASES") == 4


async def test_download_of_private_repository_needs_access(make_client: Any, load: Any) -> None:
    await load(world(private=True))
    client = await make_client()
    assert (await client.get(URL)).status == 401
    assert (await client.get(URL, headers=auth("stranger"))).status == 404
    resp = await client.get(URL, headers=auth("owner"))
    assert resp.status == 200
    assert resp.headers["Cache-Control"].startswith("private")
    assert resp.headers["Vary"] == "Authorization"
