"""The release console (docs/console.md): a signed-in publisher creates, edits, publishes, stages
and pulls back releases and adds and removes files in a browser, through the API's own functions,
against the real database and storage; errors are words next to their field; every form is
CSRF-protected."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from forge_testing.browser import csrf_of

from .console_support import field_error, signed_in
from .publish_support import publish_world, stored_files

EDIT = "/owner/pub/releases/edit"
UPDATE = "/api/v2/repos/owner/pub/releases/update"
YML = "/api/v2/repos/owner/pub/releases/feeds/electron/latest-linux.yml"


@pytest.fixture
async def writer(make_client: Any, load: Any, db: Any, settings: Any) -> Any:
    await load(publish_world())
    client = await make_client()
    browser = await signed_in(client, db, settings, "writer")
    async with browser:
        yield client, browser


async def offered(client: Any) -> str | None:
    resp = await client.get(
        UPDATE, params={"version": "0.9.0", "platform": "darwin", "arch": "x64"}
    )
    assert resp.status in (200, 204)
    return (await resp.json())["name"] if resp.status == 200 else None


async def new_draft(browser: Any, tag: str = "v2.0.0", **fields: str) -> aiohttp.ClientResponse:
    _, html = await browser.get("/owner/pub/releases/new")
    data = {"tag_name": tag, "name": "Two", "body": "", "action": "draft", **fields}
    return await browser.submit("/owner/pub/releases/new", data, page=html)


def multipart(token: str, name: str, content: bytes, *, csrf_first: bool = True) -> Any:
    form = aiohttp.FormData()
    if csrf_first:
        form.add_field("_csrf", token)
    form.add_field("attachment", content, filename=name, content_type="application/zip")
    if not csrf_first:
        form.add_field("_csrf", token)
    return form


async def upload(browser: Any, tag: str, name: str, content: bytes, **kw: Any) -> Any:
    _, html = await browser.get(f"{EDIT}/{tag}")
    headers = {"Origin": browser.origin, **kw.pop("headers", {})}
    async with browser.session.post(
        browser.url(f"{EDIT}/{tag}/assets"),
        data=multipart(csrf_of(html), name, content, **kw),
        headers=headers,
        allow_redirects=False,
    ) as reply:
        return reply.status, reply.headers, await reply.text()


async def test_a_draft_is_created_filled_and_published_and_offered_at_once(writer: Any) -> None:
    client, browser = writer
    reply = await new_draft(browser, body="**Bold** notes")
    assert reply.status == 303 and reply.headers["Location"] == f"{EDIT}/v2.0.0"
    status, html = await browser.get(f"{EDIT}/v2.0.0")
    assert status == 200 and 'value="v2.0.0"' in html and "Draft" in html
    assert 'src="/-/console.js"' in html
    assert await offered(client) == "v1.0.0"  # a draft is offered to nobody
    status, _, _ = await upload(browser, "v2.0.0", "App-2.0.0-x64.zip", b"two" * 1000)
    assert status == 303
    status, html = await browser.get(f"{EDIT}/v2.0.0?done=uploaded")
    assert "App-2.0.0-x64.zip" in html and "File uploaded." in html
    data = {"tag_name": "v2.0.0", "name": "Two", "body": "**Bold** notes", "action": "publish"}
    reply = await browser.submit(f"{EDIT}/v2.0.0", data, page=html)
    assert reply.status == 303 and reply.headers["Location"] == "/owner/pub/releases/tag/v2.0.0"
    assert await offered(client) == "v2.0.0"  # at once: the write dropped the cache


async def test_console_pages_allow_our_script_and_public_pages_none(writer: Any) -> None:
    client, browser = writer
    async with browser.session.get(browser.url("/owner/pub/releases/new")) as reply:
        csp = reply.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp.split("style-src")[0]
        assert reply.headers["Cache-Control"] == "no-store"
    public = await client.get("/owner/pub/releases")
    assert "script-src" not in public.headers["Content-Security-Policy"]
    assert "<script" not in await public.text()
    script = await client.get("/-/console.js")
    assert script.status == 200 and script.content_type == "text/javascript"
    assert script.headers["X-Content-Type-Options"] == "nosniff"


async def test_preview_renders_notes_with_the_pages_renderer_and_saves_nothing(
    writer: Any, db: Any
) -> None:
    _, browser = writer
    _, html = await browser.get("/owner/pub/releases/new")
    notes = "# Heading\n\n<script>alert(1)</script> **bold**"
    data = {"tag_name": "v3.0.0", "body": notes, "action": "preview"}
    reply = await browser.submit("/owner/pub/releases/new", data, page=html)
    assert reply.status == 200
    async with browser.session.post(
        browser.url("/owner/pub/releases/new"),
        data={"_csrf": csrf_of(html), **data},
        headers={"Origin": browser.origin},
    ) as page:
        text = await page.text()
    preview = text.split('id="preview-heading"', 1)[1]
    assert "<strong>bold</strong>" in preview and "<script>alert" not in preview
    assert await db.fetchval("SELECT count(*) FROM releases.releases WHERE tag = 'v3.0.0'") == 0


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"tag_name": ""}, "tag_name", "tag_name must not be empty"),
        ({"tag_name": "v1.0.0"}, "tag_name", "v1.0.0"),  # taken: a conflict next to the tag
        ({"tag_name": "bad tag"}, "tag_name", "tag_name "),
        ({"name": "x" * 300}, "name", "at most 255"),
        ({"rollout": "0"}, "rollout", "between 1 and 100"),
        ({"rollout": "lots"}, "rollout", "integer"),
    ],
)
async def test_validation_errors_are_words_next_to_the_field(
    writer: Any, db: Any, fields: dict[str, str], field: str, words: str
) -> None:
    _, browser = writer
    _, html = await browser.get("/owner/pub/releases/new")
    data = {"tag_name": "v4.0.0", "action": "draft", **fields}
    async with browser.session.post(
        browser.url("/owner/pub/releases/new"),
        data={"_csrf": csrf_of(html), **data},
        headers={"Origin": browser.origin},
        allow_redirects=False,
    ) as reply:
        assert reply.status in (409, 422)
        page = await reply.text()
    assert words in field_error(page, field)
    assert f'aria-describedby="{field}-error"' in page
    assert await db.fetchval("SELECT count(*) FROM releases.releases") == 8  # nothing written


async def test_forms_refuse_a_missing_or_foreign_token_and_a_cross_site_origin(
    writer: Any, db: Any
) -> None:
    _, browser = writer
    data = {"tag_name": "v5.0.0", "action": "draft"}
    for sent, origin in [
        ({}, None),
        ({"_csrf": "0" * 64}, None),
        ({"_csrf": "x"}, "https://evil.example"),
    ]:
        reply = await browser.post("/owner/pub/releases/new", {**data, **sent}, origin=origin)
        assert reply.status == 403
    assert await db.fetchval("SELECT count(*) FROM releases.releases WHERE tag='v5.0.0'") == 0


async def test_uploads_check_the_token_before_the_file_and_report_per_file_errors(
    writer: Any, db: Any, settings: Any
) -> None:
    _, browser = writer
    await new_draft(browser)
    before = stored_files(settings.storage_path)
    status, _, _ = await upload(browser, "v2.0.0", "A.zip", b"a", csrf_first=False)
    assert status == 403  # the token must come before the file
    _, html = await browser.get(f"{EDIT}/v2.0.0")
    async with browser.session.post(
        browser.url(f"{EDIT}/v2.0.0/assets"),
        data=multipart(csrf_of(html), "A.zip", b"a"),
        headers={"Origin": "https://evil.example"},
    ) as reply:
        assert reply.status == 403
    assert stored_files(settings.storage_path) == before
    # the script's requests get JSON
    script = {"headers": {"X-Forge-Console": "1"}}
    status, _, body = await upload(browser, "v2.0.0", "A.zip", b"a", **script)
    assert status == 201 and '"name": "A.zip"' in body.replace('":"', '": "')
    status, _, body = await upload(browser, "v2.0.0", "A.zip", b"b", **script)
    assert status == 409 and "A.zip" in body  # the API's own duplicate check
    status, _, body = await upload(browser, "v2.0.0", "..", b"b", **script)
    assert status in (400, 422)
    # a plain form gets the page again with the error next to the file field
    status, _, page = await upload(browser, "v2.0.0", "A.zip", b"c")
    assert status == 409 and "A.zip" in field_error(page, "attachment")


async def test_a_file_over_the_limit_is_refused_and_nothing_is_kept(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    from dataclasses import replace

    await load(publish_world())
    small = replace(settings, max_upload_bytes=1024)
    client = await make_client(app_settings=small)
    before = stored_files(settings.storage_path)
    async with await signed_in(client, db, small, "writer") as browser:
        await new_draft(browser)
        status, _, page = await upload(browser, "v2.0.0", "big.zip", b"x" * 5000)
        assert status == 413 and field_error(page, "attachment")
    assert stored_files(settings.storage_path) == before


async def test_assets_are_removed_and_files_deleted(writer: Any, settings: Any) -> None:
    _, browser = writer
    await new_draft(browser)
    await upload(browser, "v2.0.0", "gone.zip", b"unique bytes")
    _, html = await browser.get(f"{EDIT}/v2.0.0")
    asset_id = html.split('name="asset_id" value="', 1)[1].split('"', 1)[0]
    reply = await browser.submit(f"{EDIT}/v2.0.0/assets/delete", {"asset_id": asset_id}, page=html)
    assert reply.status == 303
    _, html = await browser.get(reply.headers["Location"])
    assert "gone.zip" not in html and "File removed." in html
    assert not [p for p in stored_files(settings.storage_path) if "bd1f" in p.name]


async def test_rollout_rises_and_never_falls_and_the_feeds_follow(writer: Any) -> None:
    client, browser = writer
    await new_draft(browser, rollout="20")
    await upload(browser, "v2.0.0", "App-2.0.0.AppImage", b"image")
    _, html = await browser.get(f"{EDIT}/v2.0.0")
    data = {"tag_name": "v2.0.0", "action": "publish"}
    assert (await browser.submit(f"{EDIT}/v2.0.0", data, page=html)).status == 303
    yml = await (await client.get(YML)).json(content_type=None)
    assert (yml["version"], yml["stagingPercentage"]) == ("2.0.0", 20)
    status, page = await browser.get("/owner/pub/releases/tag/v2.0.0")
    assert status == 200 and "20%" in page and "Raise rollout" in page
    reply = await browser.submit(f"{EDIT}/v2.0.0/rollout", {"rollout": "10"}, page=page)
    assert reply.status == 422
    reply = await browser.submit(
        f"{EDIT}/v2.0.0/rollout", {"rollout": "100", "back": "release"}, page=page
    )
    assert reply.status == 303 and reply.headers["Location"] == "/owner/pub/releases/tag/v2.0.0"
    yml = await (await client.get(YML)).json(content_type=None)
    assert yml["version"] == "2.0.0" and "stagingPercentage" not in yml


async def test_pull_back_to_draft_says_who_stops_seeing_it_and_they_do(writer: Any) -> None:
    client, browser = writer
    await new_draft(browser)
    await upload(browser, "v2.0.0", "App-2.0.0-x64.zip", b"zip")
    await upload(browser, "v2.0.0", "App-2.0.0.AppImage", b"image")
    _, html = await browser.get(f"{EDIT}/v2.0.0")
    await browser.submit(f"{EDIT}/v2.0.0", {"tag_name": "v2.0.0", "action": "publish"}, page=html)
    assert await offered(client) == "v2.0.0"
    status, confirm = await browser.get(f"{EDIT}/v2.0.0/unpublish")
    assert status == 200
    assert "electron-updater (Linux AppImage)" in confirm and "Squirrel.Mac" in confirm
    assert "offered <strong>v1.0.0</strong> instead. Installs that already" in confirm
    reply = await browser.submit(f"{EDIT}/v2.0.0/unpublish", {}, page=confirm)
    assert reply.status == 303
    assert await offered(client) == "v1.0.0"
    assert "2.0.0" not in await (await client.get(YML)).text()


async def test_editing_a_published_release_keeps_it_published_and_renames_its_tag(
    writer: Any, db: Any
) -> None:
    _, browser = writer
    _, html = await browser.get(f"{EDIT}/v1.0.0")
    assert "Pull this release back to draft" in html
    data = {"tag_name": "v1.0.1", "name": "One", "body": "changed", "action": "save"}
    reply = await browser.submit(f"{EDIT}/v1.0.0", data, page=html)
    assert reply.status == 303 and reply.headers["Location"] == f"{EDIT}/v1.0.1"
    row = await db.fetchrow(
        "SELECT r.draft, r.note FROM releases.releases r JOIN core.repositories p "
        "ON p.id = r.repo_id WHERE p.name = 'pub' AND r.tag = 'v1.0.1'"
    )
    assert row["draft"] is False and row["note"] == "changed"
