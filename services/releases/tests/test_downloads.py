"""Downloads at the address the API hands out: bytes, headers, ranges, ETags, the case-insensitive
fallback, bad names, the latest-release address and download counting.

Every test runs in each storage backend and serving mode (storage_modes.py): folder sent by the
service (sendfile), folder sent by nginx (X-Accel-Redirect), S3 behind a presigned redirect, S3
streamed. In the redirect mode the bytes and their Content-Type, Content-Disposition and ranges
come from the store; ETag, Last-Modified and the caching headers are the service's on HEAD, 304
and the 302 (the store's own ETag is another digest).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
from forge_common.config import Settings
from forge_common.keys import DB_POOL
from forge_releases.keys import DOWNLOAD_COUNTER
from forge_releases.storage import deterministic_bytes
from forge_testing.plugin import settings_for

from .storage_modes import MODES, ProxiedClient, running_proxy, settings_for_mode
from .support import auth, error_of, one_repo, rel

CONTENT = "0123456789abcdefghij"  # 20 bytes
URL = "/owner/app/releases/download/v1.0.0/App-x64.zip"


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(
    mode: str, database_url: str, tmp_path: Any, request: pytest.FixtureRequest
) -> Iterator[Settings]:
    s3 = request.getfixturevalue("s3_server") if mode.startswith("s3") else None
    chosen = settings_for_mode(mode, settings_for(database_url, tmp_path / "storage"), s3)
    yield chosen
    if mode == "folder-nginx":
        shutil.rmtree(chosen.storage_path, ignore_errors=True)


@pytest.fixture
async def make_client(make_client: Any, mode: str, settings: Settings) -> AsyncIterator[Any]:
    """The releases test client; in the nginx mode, one that goes through nginx."""
    proxied: list[ProxiedClient] = []
    with contextlib.ExitStack() as stack:

        async def _make(**kw: Any) -> Any:
            client = await make_client(**kw)
            if mode != "folder-nginx":
                return client
            port = stack.enter_context(running_proxy(client.port, settings.storage_path))
            proxied.append(ProxiedClient(client, port))
            return proxied[-1]

        yield _make
        for client in proxied:
            await client.close()


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


async def test_download_bytes_and_headers(make_client: Any, load: Any, mode: str) -> None:
    await load(world())
    client = await make_client()
    got = await client.get(URL)
    head = await client.head(URL)
    service_answers = [head] if mode == "s3-redirect" else [head, got]
    assert got.status == 200
    assert await got.read() == CONTENT.encode()
    for resp in [got, head]:
        assert resp.headers["Content-Length"] == "20"
        assert resp.headers["Content-Type"] == "application/octet-stream"
        assert resp.headers["Accept-Ranges"] == "bytes"
        assert resp.headers["Content-Disposition"] == (
            "attachment; filename=\"App-x64.zip\"; filename*=UTF-8''App-x64.zip"
        )
    for resp in service_answers:
        assert resp.headers["ETag"] == '"' + hashlib.sha256(CONTENT.encode()).hexdigest() + '"'
        assert resp.headers["Last-Modified"] == "Thu, 01 Jan 2026 00:01:00 GMT"
        assert resp.headers["Cache-Control"].startswith("public")
        assert "X-Request-Id" in resp.headers
        assert resp.headers["X-Content-Type-Options"] == "nosniff"


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
    etag = (await client.head(URL)).headers["ETag"]
    for header in [etag, f"W/{etag}", f'"nope", {etag}', "*"]:
        resp = await client.get(URL, headers={"If-None-Match": header})
        assert resp.status == 304, header
        assert await resp.read() == b""
        assert resp.headers["ETag"] == etag
    assert (await client.get(URL, headers={"If-None-Match": '"nope"'})).status == 200


async def test_download_if_modified_since(make_client: Any, load: Any, mode: str) -> None:
    await load(world())
    client = await make_client()
    later = {"If-Modified-Since": "Fri, 02 Jan 2026 00:00:00 GMT"}
    assert (await client.get(URL, headers=later)).status == 304
    earlier = {"If-Modified-Since": "Wed, 31 Dec 2025 00:00:00 GMT"}
    assert (await client.get(URL, headers=earlier)).status == 200
    # moto answers 500 to a malformed If-Modified-Since (S3 and MinIO ignore it): in the redirect
    # mode the service's own answer is checked
    redirect = mode == "s3-redirect"
    garbage = {"If-Modified-Since": "garbage"}
    resp = await client.get(URL, headers=garbage, allow_redirects=not redirect)
    assert resp.status == (302 if redirect else 200)


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


async def byteranges(resp: Any) -> list[tuple[str, str, bytes]]:
    """(Content-Type, Content-Range, bytes) of each part of a multipart/byteranges answer, read
    by aiohttp's multipart parser."""
    parts = []
    reader = aiohttp.MultipartReader.from_response(resp)
    while (part := await reader.next()) is not None:
        assert isinstance(part, aiohttp.BodyPartReader)
        body = await part.read()
        parts.append((part.headers["Content-Type"], part.headers["Content-Range"], bytes(body)))
    return parts


async def test_download_several_ranges_are_multipart(make_client: Any, load: Any) -> None:
    """electron-updater's differential download: 206 multipart/byteranges, parts in the order
    asked, each with its Content-Range; unsatisfiable ranges beside others are dropped."""
    await load(world())
    client = await make_client()
    cases = {
        "bytes=0-1,5-6": [(b"01", "bytes 0-1/20"), (b"56", "bytes 5-6/20")],
        "bytes=10-11, 0-0,-2": [
            (b"ab", "bytes 10-11/20"),
            (b"0", "bytes 0-0/20"),
            (b"ij", "bytes 18-19/20"),
        ],
        "bytes=3-4,40-50": [(b"34", "bytes 3-4/20")],
    }
    for header, expected in cases.items():
        resp = await client.get(URL, headers={"Range": header})
        assert resp.status == 206, header
        if len(expected) == 1:
            assert await resp.read() == expected[0][0]
            assert resp.headers["Content-Range"] == expected[0][1]
            continue
        assert resp.headers["Content-Type"].startswith("multipart/byteranges; boundary=")
        length = int(resp.headers["Content-Length"])
        parts = await byteranges(resp)
        assert [(body, crange) for _, crange, body in parts] == expected, header
        assert {ctype for ctype, _, _ in parts} == {"application/octet-stream"}
        head = await client.head(URL, headers={"Range": header})
        assert head.status == 206 and int(head.headers["Content-Length"]) == length


async def test_download_multipart_body_is_what_electron_updater_reads(
    make_client: Any, load: Any
) -> None:
    """Every boundary, the first included, follows a CRLF, as nginx writes it: zsync throws away
    the line before each boundary it expects (a body starting with `--boundary` made it retry for
    ever); DataSplitter looks for the blank line ending the part headers after the boundary."""
    await load(world())
    client = await make_client()
    resp = await client.get(URL, headers={"Range": "bytes=0-1,5-6"})
    boundary = resp.headers["Content-Type"].split("boundary=", 1)[1]
    body = await resp.read()
    assert body.startswith(f"\r\n--{boundary}\r\n".encode())
    assert body.count(f"\r\n--{boundary}\r\n".encode()) == 2
    assert body.endswith(f"\r\n--{boundary}--\r\n".encode())
    assert len(body) == int(resp.headers["Content-Length"])


async def test_download_ignored_ranges_send_everything(make_client: Any, load: Any) -> None:
    """Other units, malformed headers, overlapping ranges asking for more than the file: the
    whole file (RFC 9110 allows it)."""
    await load(world())
    client = await make_client()
    overlapping = "bytes=" + ",".join(["0-19"] * 2)
    for header in ["items=0-1", "bytes=5-2", "bytes=a-b", "bytes", "0-5", overlapping]:
        resp = await client.get(URL, headers={"Range": header})
        assert resp.status == 200, header
        assert await resp.read() == CONTENT.encode()


async def test_download_if_range_mismatch_sends_everything(make_client: Any, load: Any) -> None:
    await load(world())
    client = await make_client()
    etag = (await client.head(URL)).headers["ETag"]
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


async def test_download_bad_names_are_404(make_client: Any, load: Any, mode: str) -> None:
    await load(world())
    client = await make_client()
    for name in ["..", "%2E%2E", "a%2Fb", "..%2Fsecret", "a%00b", "App-x64.zip%00", "%2e%2e%2f"]:
        resp = await client.get(f"/owner/app/releases/download/v1.0.0/{name}")
        if mode == "folder-nginx" and "%00" in name:
            assert resp.status == 400, name  # nginx refuses a NUL in the path itself
            continue
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
    await (await client.get(URL)).read()  # 4th full download
    etag = (await client.head(URL)).headers["ETag"]
    await (await client.get(URL, headers={"If-None-Match": etag})).read()  # 304: not counted
    await (await client.get("/owner/app/releases/latest/download/app-x64.zip")).read()  # 5th
    # visible in the API at once, before the batch is written
    assert (await asset_counts(client))["App-x64.zip"] == 5
    # the app's own timer may have written some already on a slow machine: what is stored counts
    await client.app[DOWNLOAD_COUNTER].flush(client.app[DB_POOL])
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
    assert resp.status == 200 and await resp.read() == CONTENT.encode()
    # the service's answer (in the redirect mode, its 302)
    resp = await client.get(URL, headers=auth("owner"), allow_redirects=False)
    assert resp.status in (200, 302)
    assert resp.headers["Cache-Control"].startswith("private")
    assert resp.headers["Vary"] == "Authorization"


# zsyncmake's header (text lines to the first empty line), then block checksums kept byte for byte
ZSYNC_CHECKSUMS = "\x00\x01binary\nchecksums\n\nURL: not-a-header\xff"
ZSYNC = (
    "zsync: 0.6.2\nFilename: App-x64.zip\nBlocksize: 2048\nLength: 20\n"
    "URL: App-x64.zip\nURL: http://mirror.example/App-x64.zip\nSHA-1: 0123\n\n" + ZSYNC_CHECKSUMS
)


def zsync_world() -> dict[str, Any]:
    data = world()
    data["repos"][0]["releases"][0]["assets"].append(
        {"name": "App-x64.zip.zsync", "content": ZSYNC}
    )
    return data


async def test_zsync_control_file_urls_are_absolute_and_pinned(make_client: Any, load: Any) -> None:
    """zsync resolves a relative `URL:` against wherever the `.zsync` came from, query dropped:
    through the permalink of the latest release it is the release's own file, absolute; a URL
    that was absolute stays; the checksums after the header are the stored bytes."""
    await load(zsync_world())
    client = await make_client()
    resp = await client.get("/owner/app/releases/latest/download/App-x64.zip.zsync")
    assert resp.status == 200
    body = await resp.read()
    header, checksums = body.split(b"\n\n", 1)
    assert header.split(b"\n")[4:6] == [
        b"URL: http://forge.test/owner/app/releases/download/v1.0.0/App-x64.zip",
        b"URL: http://mirror.example/App-x64.zip",
    ]
    assert checksums == ZSYNC_CHECKSUMS.encode()
    assert int(resp.headers["Content-Length"]) == len(body)
    etag = resp.headers["ETag"]
    assert etag == f'"{hashlib.sha256(body).hexdigest()}"'
    head = await client.head("/owner/app/releases/latest/download/App-x64.zip.zsync")
    assert int(head.headers["Content-Length"]) == len(body) and head.headers["ETag"] == etag
    ranged = await client.get(
        "/owner/app/releases/download/v1.0.0/App-x64.zip.zsync", headers={"Range": "bytes=-9"}
    )
    assert ranged.status == 206 and await ranged.read() == body[-9:]
    again = await client.get(
        "/owner/app/releases/latest/download/App-x64.zip.zsync", headers={"If-None-Match": etag}
    )
    assert again.status == 304


async def test_zsync_client_is_never_redirected_to_the_store(
    make_client: Any, load: Any, mode: str
) -> None:
    """zsync keeps a redirected address for the rest of its transfer: its ranges are sent by the
    service, never handed to a presigned URL (the store answers several ranges with the whole
    file, which zsync refuses)."""
    await load(world())
    client = await make_client()
    zsync = {"User-Agent": "zsync/0.6.2", "Range": "bytes=0-1"}
    resp = await client.get(URL, headers=zsync, allow_redirects=False)
    assert resp.status == 206 and await resp.read() == b"01"
    other = await client.get(URL, headers={"Range": "bytes=0-1"}, allow_redirects=False)
    assert other.status == (302 if mode == "s3-redirect" else 206)
