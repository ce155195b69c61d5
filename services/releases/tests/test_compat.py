"""The Gitea (`/api/v1`) and GitHub (`/api/v3`) shapes of the release API: the same
releases under the same access rules, with each platform's paths, names, paging and uploads."""

from __future__ import annotations

import io
from typing import Any
from xml.etree import ElementTree as ET

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from .publish_support import auth, publish_world

Client = TestClient[Any, Any]
V1 = "/api/v1/repos/owner/{}"
V3 = "/api/v3/repos/owner/{}"


@pytest.fixture
async def client(make_client: Any, load: Any) -> Client:
    await load(publish_world())
    result: Client = await make_client()
    return result


async def create(client: Client, root: str, tag: str, **extra: Any) -> dict[str, Any]:
    resp = await client.post(
        f"{root.format('pub')}/releases", json={"tag_name": tag, **extra}, headers=auth("writer")
    )
    assert resp.status == 201, await resp.text()
    body: dict[str, Any] = await resp.json()
    assert resp.headers["Location"] == body["url"]
    return body


async def test_gitea_list_includes_prereleases_pages_and_filters(client: Client) -> None:
    await create(client, V1, "v2.0.0-beta.1", prerelease=True)
    resp = await client.get(f"{V1.format('pub')}/releases?limit=1")
    assert resp.status == 200
    body = await resp.json()
    assert [r["tag_name"] for r in body] == ["v2.0.0-beta.1"]
    assert resp.headers["X-Total-Count"] == "2"
    assert "limit=1" in resp.headers["Link"] and 'rel="next"' in resp.headers["Link"]
    assert body[0]["url"].endswith(f"/api/v1/repos/owner/pub/releases/{body[0]['id']}")
    resp = await client.get(f"{V1.format('pub')}/releases?pre-release=false&draft=false")
    assert [r["tag_name"] for r in await resp.json()] == ["v1.0.0"]


async def test_gitea_reads_by_tag_id_and_assets(client: Client) -> None:
    root = V1.format("pub")
    by_tag = await (await client.get(f"{root}/releases/tags/v1.0.0")).json()
    by_id = await (await client.get(f"{root}/releases/{by_tag['id']}")).json()
    assert by_tag == by_id and by_tag["name"] == "One"
    assets = await (await client.get(f"{root}/releases/{by_tag['id']}/assets")).json()
    assert [a["name"] for a in assets] == ["App-1.0.0-x64.zip"]
    one = await client.get(f"{root}/releases/{by_tag['id']}/assets/{assets[0]['id']}")
    assert (await one.json())["browser_download_url"].endswith(
        "/owner/pub/releases/download/v1.0.0/App-1.0.0-x64.zip"
    )
    assert (await client.get(f"{root}/releases/latest")).status == 200
    assert (await client.get(f"{root}/releases/tags/nope")).status == 404
    assert (await client.get(f"{root}/releases/v1.0.0")).status == 404  # an id, never a tag
    repo = await (await client.get(root)).json()
    assert repo["full_name"] == "owner/pub" and repo["private"] is False


async def test_private_repositories_need_the_token_and_hide_from_strangers(
    client: Client,
) -> None:
    for root in (V1, V3):
        path = f"{root.format('priv')}/releases"
        assert (await client.get(path)).status == 401
        missing = await client.get(f"{root.format('nothing')}/releases", headers=auth("stranger"))
        hidden = await client.get(path, headers=auth("stranger"))
        assert hidden.status == missing.status == 404
        assert await hidden.json() == await missing.json() == {"message": "Repository not found"}
        ok = await client.get(path, headers=auth("reader"))
        assert [r["tag_name"] for r in await ok.json()] == ["v1.0.0"]


async def test_drafts_are_missing_to_readers(client: Client) -> None:
    draft = await create(client, V3, "v3.0.0", draft=True)
    for caller in ("anonymous", "reader"):
        resp = await client.get(f"{V3.format('pub')}/releases/{draft['id']}", headers=auth(caller))
        assert resp.status == 404
        listed = await client.get(f"{V1.format('pub')}/releases", headers=auth(caller))
        assert "v3.0.0" not in [r["tag_name"] for r in await listed.json()]


async def test_github_shape_paging_and_asset_bytes(client: Client) -> None:
    root = V3.format("pub")
    await create(client, V3, "v2.0.0")
    resp = await client.get(f"{root}/releases?per_page=1&page=2")
    assert [r["tag_name"] for r in await resp.json()] == ["v1.0.0"]
    assert "per_page=1" in resp.headers["Link"] and 'rel="prev"' in resp.headers["Link"]
    release = await (await client.get(f"{root}/releases/tags/v1.0.0")).json()
    assert release["upload_url"].endswith(f"/releases/{release['id']}/assets{{?name,label}}")
    assert release["node_id"] and release["assets_url"].endswith("/assets")
    asset = release["assets"][0]
    assert asset["state"] == "uploaded" and asset["content_type"]
    as_json = await client.get(asset["url"].replace("http://forge.test", ""))
    assert (await as_json.json())["name"] == "App-1.0.0-x64.zip"
    as_bytes = await client.get(
        asset["url"].replace("http://forge.test", ""),
        headers={"Accept": "application/octet-stream"},
    )
    assert await as_bytes.read() == b"one"
    latest = await (await client.get(f"{root}/releases/latest")).json()
    assert latest["tag_name"] == "v2.0.0"
    assert (await client.get(f"{root}/releases/assets/999999")).status == 404


async def test_uploads_in_each_shape(client: Client) -> None:
    gitea = await create(client, V1, "v4.0.0")
    form = aiohttp.FormData()
    form.add_field("attachment", io.BytesIO(b"gitea bytes"), filename="a.bin")
    resp = await client.post(
        f"{V1.format('pub')}/releases/{gitea['id']}/assets", data=form, headers=auth("writer")
    )
    assert resp.status == 201 and (await resp.json())["name"] == "a.bin"
    github = await create(client, V3, "v5.0.0")
    upload = github["upload_url"].split("{")[0].replace("http://forge.test", "")
    resp = await client.post(
        f"{upload}?name=b.bin&label=B",
        data=b"github bytes",
        headers={**auth("writer"), "Content-Type": "application/octet-stream"},
    )
    body = await resp.json()
    assert resp.status == 201 and body["name"] == "b.bin" and body["state"] == "uploaded"
    got = await client.get("/owner/pub/releases/download/v5.0.0/b.bin")
    assert await got.read() == b"github bytes"
    assert (
        await client.post(f"{upload}?name=c.bin", data=b"x", headers=auth("reader"))
    ).status == 403
    delete = await client.delete(
        f"{V3.format('pub')}/releases/assets/{body['id']}", headers=auth("writer")
    )
    assert delete.status == 204
    assert (await client.get("/owner/pub/releases/download/v5.0.0/b.bin")).status == 404


async def test_atom_feed_links_each_release_tag(client: Client) -> None:
    await create(client, V3, "v2.0.0-rc.1", prerelease=True)
    resp = await client.get("/owner/pub/releases.atom")
    assert resp.status == 200 and resp.content_type == "application/atom+xml"
    feed = ET.fromstring(await resp.read())  # noqa: S314 - our own answer
    ns = {"a": "http://www.w3.org/2005/Atom"}
    links = [e.find("a:link", ns).get("href") for e in feed.findall("a:entry", ns)]  # type: ignore[union-attr]
    assert [link.rsplit("/tag/", 1)[1] for link in links] == ["v2.0.0-rc.1", "v1.0.0"]
    assert (await client.get("/owner/priv/releases.atom")).status == 401
