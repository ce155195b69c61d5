"""Update keys (docs/access.md "Update keys"): created, listed and revoked by repository admins,
stored as digests; a key in the URL reads one private repository's releases, and every URL it is
handed is signed, short-lived and downloadable with no headers at all."""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from forge_releases.access_keys.signed_urls import URL_SIGNER

from .support import TOKENS, error_of, rel

KEYS = "/api/v2/repos/owner/app/update_keys"
UPDATE = "/api/v2/repos/owner/app/releases/update?version=0.1.0&platform=windows&arch=x64"
CONTENT = "the private bytes"
OWNER = {"Authorization": f"token {TOKENS['owner']}"}


def world() -> dict[str, Any]:
    release = rel("v1.0.0", 1)
    release["assets"] = [
        {"name": "App Setup 1.0.0-x64.exe", "content": CONTENT},
        {"name": "App-1.0.0-full.nupkg", "content": "nupkg"},
        {"name": "RELEASES", "content": "SHA1 App-1.0.0-full.nupkg 5"},
    ]
    draft = rel("v2.0.0", 2, draft=True)
    draft["assets"] = [{"name": "App-2.0.0-x64.zip", "content": "draft"}]
    users = [{"name": name, "tokens": [TOKENS[name]]} for name in ("owner", "reader", "stranger")]
    reader = [{"user": "reader", "permission": "read"}]
    return {
        "users": users,
        "repos": [
            {
                "owner": "owner",
                "name": name,
                "private": True,
                "collaborators": reader,
                "releases": [release, draft],
            }
            for name in ("app", "other")
        ],
    }


def _with_key(url: str, key: str) -> str:
    return f"{url}&{urlencode({'key': key})}"


async def _client(make_client: Any, load: Any) -> Any:
    await load(world())
    return await make_client()


async def _create(client: Any, repo: str = "app", name: str = "desktop app") -> dict[str, Any]:
    resp = await client.post(
        f"/api/v2/repos/owner/{repo}/update_keys", json={"name": name}, headers=OWNER
    )
    assert resp.status == 201, await resp.text()
    body: dict[str, Any] = await resp.json()
    return body


async def test_admin_creates_lists_and_revokes_keys(make_client: Any, load: Any, db: Any) -> None:
    client = await _client(make_client, load)
    created = await _create(client)
    assert created["key"].startswith("forge_uk_")
    assert created["name"] == "desktop app"
    assert created["creator"] == "owner"
    resp = await client.get(KEYS, headers=OWNER)
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-store"
    listed = await resp.json()
    assert [(k["id"], k["name"], k["creator"]) for k in listed] == [
        (created["id"], "desktop app", "owner")
    ]
    assert "key" not in listed[0]
    # only the digest is stored: no column holds the key
    rows = await db.fetch("SELECT * FROM releases.update_keys")
    assert len(rows) == 1
    assert rows[0]["key_sha256"] == hashlib.sha256(created["key"].encode()).digest()
    assert created["key"] not in repr([dict(r) for r in rows])

    resp = await client.delete(f"{KEYS}/{created['id']}", headers=OWNER)
    assert resp.status == 204
    assert await (await client.get(KEYS, headers=OWNER)).json() == []
    resp = await client.delete(f"{KEYS}/{created['id']}", headers=OWNER)
    assert resp.status == 404
    assert error_of(await resp.json())[0] == "UpdateKeyNotFound"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": f"token {TOKENS['reader']}"}, 403),
        ({"Authorization": f"token {TOKENS['stranger']}"}, 404),
    ],
)
async def test_only_admins_manage_keys(
    make_client: Any, load: Any, headers: dict[str, str], status: int
) -> None:
    client = await _client(make_client, load)
    key = await _create(client)
    for resp in (
        await client.post(KEYS, json={"name": "x"}, headers=headers),
        await client.get(KEYS, headers=headers),
        await client.delete(f"{KEYS}/{key['id']}", headers=headers),
    ):
        assert resp.status == status
    assert len(await (await client.get(KEYS, headers=OWNER)).json()) == 1


async def test_a_key_is_not_a_credential_for_managing_keys(make_client: Any, load: Any) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    assert (await client.get(KEYS, params={"key": key})).status == 401
    assert (await client.post(KEYS, params={"key": key}, json={"name": "x"})).status == 401


async def test_key_name_is_checked(make_client: Any, load: Any) -> None:
    client = await _client(make_client, load)
    for body in ({}, {"name": ""}, {"name": "x" * 101}, {"name": 3}):
        resp = await client.post(KEYS, json=body, headers=OWNER)
        assert resp.status == 422, body


async def test_update_check_with_key_hands_out_signed_urls_that_need_no_headers(
    make_client: Any, load: Any
) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    assert (await client.get(UPDATE)).status == 401  # without the key: as before
    resp = await client.get(_with_key(UPDATE, key))
    assert resp.status == 200
    assert resp.headers["Cache-Control"].startswith("private")
    body = await resp.json()
    urls = [body["url"], body["platform"]["releases_url"], body["platform"]["nupkg_url"]]
    for url in urls:
        parts = urlsplit(url)
        assert set(parse_qs(parts.query)) == {"key_id", "expires", "signature"}
        assert key not in url
    assert (
        urlsplit(body["url"]).path
        == "/owner/app/releases/download/v1.0.0/App%20Setup%201.0.0-x64.exe"
    )
    # the client has no headers to send: not even a cookie jar
    client.session.cookie_jar.clear()
    url = urlsplit(body["url"])
    download = await client.get(f"{url.path}?{url.query}", skip_auto_headers=["User-Agent"])
    assert download.status == 200
    assert await download.read() == CONTENT.encode()
    assert download.headers["Cache-Control"].startswith("private")
    # the same request again is signed afresh, never served from the shared answers
    again = await (await client.get(_with_key(UPDATE, key))).json()
    assert "signature=" in again["url"]


async def test_reads_with_a_key_sign_every_download_url(make_client: Any, load: Any) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    resp = await client.get("/api/v2/repos/owner/app/releases", params={"key": key})
    assert resp.status == 200
    releases = await resp.json()
    assert [r["tag_name"] for r in releases] == ["v1.0.0"]  # no drafts: read only
    for asset in releases[0]["assets"]:
        assert "signature=" in asset["browser_download_url"]
    # with a token, nothing is signed
    plain = await (await client.get("/api/v2/repos/owner/app/releases", headers=OWNER)).json()
    assert "?" not in plain[0]["assets"][0]["browser_download_url"]


async def test_key_downloads_directly_and_not_drafts(make_client: Any, load: Any) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    base = "/owner/app/releases"
    assert (await client.get(f"{base}/latest/download/RELEASES", params={"key": key})).status == 200
    head = await client.head(f"{base}/download/v1.0.0/RELEASES", params={"key": key})
    assert head.status == 200
    draft = await client.get(f"{base}/download/v2.0.0/App-2.0.0-x64.zip", params={"key": key})
    assert draft.status == 404


async def test_wrong_repository_bad_and_missing_keys_answer_as_a_missing_repo(
    make_client: Any, load: Any
) -> None:
    client = await _client(make_client, load)
    other_key = (await _create(client, "other"))["key"]
    missing = await client.get("/api/v2/repos/owner/nothing/releases/update", params={"key": "x"})
    assert missing.status == 404
    expected = error_of(await missing.json())
    assert expected == ("RepoNotFound", "Repository not found")
    for key in (other_key, "forge_uk_wrong", "", "\x01"):
        resp = await client.get(_with_key(UPDATE, key))
        assert resp.status == 404, key
        assert _without_request_id(await resp.json()) == _without_request_id(await missing.json())
        assert _headers(resp) == _headers(missing)


def _without_request_id(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "error": {k: v for k, v in body["error"].items() if k != "request_id"}}


def _headers(resp: Any) -> dict[str, str]:
    return {k: v for k, v in resp.headers.items() if k.lower() not in ("x-request-id", "date")}


async def test_a_key_opens_its_repository_even_in_a_hidden_organization(
    make_client: Any, load: Any
) -> None:
    data = world()
    data["orgs"] = [
        {"name": "hidden", "visibility": "private", "members": [{"user": "owner", "owner": True}]}
    ]
    data["repos"][1] = {**data["repos"][1], "owner": "hidden", "name": "app"}
    await load(data)
    client = await make_client()
    key = (await _create(client, "app"))["key"]
    hidden_key = (
        await (
            await client.post(
                "/api/v2/repos/hidden/app/update_keys", json={"name": "k"}, headers=OWNER
            )
        ).json()
    )["key"]
    hidden_update = UPDATE.replace("/owner/", "/hidden/")
    assert (await client.get(hidden_update)).status == 404  # anonymous: no such owner
    resp = await client.get(_with_key(hidden_update, hidden_key))
    assert resp.status == 200
    assert "signature=" in (await resp.json())["url"]
    # each key opens its own repository only
    assert (await client.get(_with_key(hidden_update, key))).status == 404
    assert (await client.get(_with_key(UPDATE, hidden_key))).status == 404


async def test_a_key_never_writes(make_client: Any, load: Any) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    api = "/api/v2/repos/owner/app/releases"
    created = await client.post(api, params={"key": key}, json={"tag_name": "v9"})
    assert created.status == 401
    assert (await client.delete(f"{api}/1", params={"key": key})).status == 401
    # a token keeps working as before, whatever key rides along
    resp = await client.post(api, params={"key": "junk"}, json={"tag_name": "v9"}, headers=OWNER)
    assert resp.status == 201


async def test_signed_url_refused_once_expired_tampered_or_revoked(
    make_client: Any, load: Any
) -> None:
    client = await _client(make_client, load)
    created = await _create(client)
    path = "/owner/app/releases/download/v1.0.0/App%20Setup%201.0.0-x64.exe"
    signer = client.app[URL_SIGNER]
    fresh = signer.query(created["id"], path, time.time())
    assert (await client.get(f"{path}?{fresh}")).status == 200
    expired = signer.query(created["id"], path, time.time() - signer.seconds - 5)
    assert (await client.get(f"{path}?{expired}")).status == 404
    other_file = "/owner/app/releases/download/v1.0.0/RELEASES"
    assert (await client.get(f"{other_file}?{fresh}")).status == 404
    other_repo = path.replace("/app/", "/other/")
    assert (await client.get(f"{other_repo}?{fresh}")).status == 404
    longer = fresh.replace("expires=", "expires=9")
    assert (await client.get(f"{path}?{longer}")).status == 404
    await client.delete(f"{KEYS}/{created['id']}", headers=OWNER)
    assert (await client.get(f"{path}?{fresh}")).status == 404


async def test_keys_and_signatures_stay_out_of_our_logs(
    make_client: Any, load: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    caplog.set_level(logging.DEBUG)
    body = await (await client.get(_with_key(UPDATE, key))).json()
    signature = parse_qs(urlsplit(body["url"]).query)["signature"][0]
    await client.get(_with_key(UPDATE, "forge_uk_wrong"))
    assert key not in caplog.text
    assert signature not in caplog.text
    assert "forge_uk_wrong" not in caplog.text


async def test_a_public_repository_checks_keys_too_even_after_a_token_check(
    make_client: Any, load: Any
) -> None:
    data = world()
    data["repos"][0] = {**data["repos"][0], "private": False}
    await load(data)
    client = await make_client(wait_cache=True)
    key = (await _create(client))["key"]
    junk = _with_key(UPDATE, "forge_uk_junk")
    for _ in range(2):  # the second would come from the kept answers, if this query were kept
        assert (await client.get(junk, headers=OWNER)).status == 200
    assert (await client.get(junk)).status == 404
    assert (await client.get(UPDATE)).status == 200
    resp = await client.get(_with_key(UPDATE, key))
    assert resp.status == 200
    assert resp.headers["Cache-Control"].startswith("private")
    assert "signature=" in (await resp.json())["url"]


def _link(resp: Any, rel_name: str) -> str:
    """The `rel_name` URL of the answer's Link header, as a path and query on the test server."""
    for part in resp.headers["Link"].split(", "):
        url, _, rel_part = part.partition("; ")
        if rel_part == f'rel="{rel_name}"':
            parts = urlsplit(url.strip("<>"))
            return f"{parts.path}?{parts.query}"
    raise AssertionError(f"no {rel_name} link in {resp.headers['Link']!r}")


@pytest.mark.parametrize(
    ("first_page", "limit_name"),
    [
        ("/api/v2/repos/owner/app/releases?limit=1", "limit"),
        ("/api/v1/repos/owner/app/releases?limit=1", "limit"),
        ("/api/v3/repos/owner/app/releases?per_page=1", "per_page"),
    ],
)
async def test_a_keyed_list_links_its_next_page_signed_never_with_the_key(
    make_client: Any, load: Any, first_page: str, limit_name: str
) -> None:
    # docs/access.md "Update keys": the key never appears in a URL forge hands out; the Link of a
    # list read through a key is signed instead, so page 2 opens as page 1 did
    shape = world()
    shape["repos"][0]["releases"].append(rel("v1.1.0", 3))
    await load(shape)
    client = await make_client()
    key = (await _create(client))["key"]
    first = await client.get(_with_key(first_page, key))
    assert first.status == 200, await first.text()
    assert key not in first.headers["Link"]
    following = _link(first, "next")
    query = parse_qs(urlsplit(following).query)
    assert "key" not in query and query["page"] == ["2"] and query[limit_name] == ["1"]
    assert "signature" in query
    second = await client.get(following)
    assert second.status == 200, await second.text()
    assert [r["tag_name"] for r in await second.json()] == ["v1.0.0"]
    # back: the first page again, through its own signed link
    back = await client.get(_link(second, "prev"))
    assert back.status == 200
    assert [r["tag_name"] for r in await back.json()] == ["v1.1.0"]
    # the page links of a token's list carry no credential at all
    plain = await client.get(first_page, headers=OWNER)
    assert "signature" not in plain.headers["Link"] and "key" not in plain.headers["Link"]


async def test_a_key_in_a_pages_address_never_becomes_a_return_address(
    make_client: Any, load: Any
) -> None:
    """docs/accounts.md "Return addresses": the page a key opens links to the sign-in without
    the key, and the sign-in's `Location` afterwards carries none either."""
    client = await _client(make_client, load)
    key = (await _create(client))["key"]
    for path in ("/owner/app/releases", "/owner/app"):
        reply = await client.get(f"{path}?{urlencode({'key': key, 'page': '1'})}")
        assert reply.status == 200
        html = await reply.text()
        assert key not in html and "forge_uk_" not in html
        assert f'href="/user/login?redirect_to={path}%3Fpage%3D1"' in html
    # a key that opens nothing: the 404 page names no key either
    reply = await client.get("/owner/app/releases?key=forge_uk_wrong")
    assert reply.status == 404 and "forge_uk_" not in await reply.text()
