"""Bad input never yields a 500: odd paths, query values and headers on every endpoint."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .support import auth, error_of, one_repo, rel

NASTY = [
    "", " ", "%", "%00", "\x00", "..", "../..", "a" * 5000, "ü", "😀", "Ｋ", "\u212a", "'", '"',
    "<script>", "-1", "0", "1e9", "9" * 60, "null", "true", "[]", "{}", "v", "v1.0.0\n", "\r\n",
    "a\x00b",
]  # fmt: skip
RAW = ["%FF", "%ED%A0%80", "%C0%AE%C0%AE", "%2e%2e%2f%2e%2e", "%25", "a%2Fb"]  # sent as is
TEMPLATES = [
    "/api/v2/repos/{x}/app/releases",
    "/api/v2/repos/owner/{x}/releases",
    "/api/v2/repos/owner/app/releases/{x}",
    "/api/v2/repos/owner/app/releases?page={x}&limit={x}&prereleases={x}&drafts={x}",
    "/api/v2/repos/owner/app/releases/latest?channel={x}",
    "/api/v2/repos/owner/app/releases/update?version={x}",
    "/api/v2/repos/owner/app/releases/update?version=1.0.0&platform={x}&arch={x}&channel={x}",
    "/owner/app/releases/download/{x}/App.exe",
    "/owner/app/releases/download/v1.0.0/{x}",
    "/owner/app/releases/latest/download/{x}",
    "/{x}/app/releases/latest/download/App.exe",
]


async def test_no_input_yields_a_500(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.exe")]))
    client = await make_client()
    for template in TEMPLATES:
        for value in [quote(v, safe="") for v in NASTY] + RAW:
            path = template.replace("{x}", value)
            if path.startswith("//"):
                continue  # not a path a client can send
            for headers in [{}, auth("owner")]:
                resp = await client.get(path, headers=headers)
                assert resp.status < 500, (path, resp.status)
                # (aiohttp itself refuses over-long request lines with a plain-text 400)
                if resp.status >= 400 and resp.content_type == "application/json":
                    assert (await resp.json())["error"]["code"] != "InternalError"


async def test_odd_headers_never_yield_a_500(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.exe")]))
    client = await make_client()
    odd = [
        {"Range": "bytes=" + "9" * 100 + "-"},
        {"Range": "bytes=-" + "9" * 100},
        {"Range": "bytes=0-" + "9" * 100},
        {"Range": "bytes=٣-٤"},
        {"If-None-Match": ""},
        {"If-None-Match": ","},
        {"If-Modified-Since": "Mon, 99 Foo 99999 99:99:99 GMT"},
        {"If-Modified-Since": "Thu, 01 Jan 2026 00:00:00"},
        {"If-Range": "garbage", "Range": "bytes=0-1"},
        {"Authorization": "token"},
        {"Authorization": "Basic abc"},
    ]
    for headers in odd:
        for path in [
            "/owner/app/releases/download/v1.0.0/App.exe",
            "/api/v2/repos/owner/app/releases/update?version=0.1.0&platform=windows",
        ]:
            resp = await client.get(path, headers=headers)
            assert resp.status < 500, (headers, resp.status)


async def test_unknown_query_parameters_are_ignored_everywhere(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.exe")]))
    client = await make_client()
    for path in [
        "/api/v2/repos/owner/app/releases?foo=1&page=1&bar",
        "/api/v2/repos/owner/app/releases/v1.0.0?x=y",
        "/api/v2/repos/owner/app/releases/latest?channel=stable&z",
        "/owner/app/releases/download/v1.0.0/App.exe?id=app&localVersion=1.0.0&arch=amd64",
    ]:
        assert (await client.get(path)).status == 200, path


async def test_version_value_is_echoed_as_sent(make_client: Any, load: Any) -> None:
    await load(one_repo([rel("v1.0.0", 1, "App.exe")]))
    client = await make_client()
    resp = await client.get(
        "/api/v2/repos/owner/app/releases/update", params={"version": "v1.x<b>"}
    )
    assert resp.status == 400
    assert error_of(await resp.json()) == ("ValInvalidInput", "Invalid version format: v1.x<b>")
