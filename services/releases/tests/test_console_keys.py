"""The console's key and settings pages (docs/console.md): update keys created (shown once with
feed URLs that work with no header), listed and revoked; the Tauri key set, refused in words and
removed, and then checked on uploads from the console; repository settings saved."""

from __future__ import annotations

import html as htmllib
import re
from typing import Any

import pytest
from forge_testing.browser import csrf_of

from .console_support import field_error, signed_in
from .minisign_support import Signer
from .publish_support import publish_world
from .test_console_releases import upload

KEYS = "/owner/priv/settings/update-keys"


@pytest.fixture
async def admin(make_client: Any, load: Any, db: Any, settings: Any) -> Any:
    await load(publish_world())
    client = await make_client()
    async with await signed_in(client, db, settings, "repoadmin") as browser:
        yield client, browser


async def test_an_update_key_is_shown_once_with_feed_urls_that_need_no_header(
    admin: Any, db: Any
) -> None:
    client, browser = admin
    _, page = await browser.get(KEYS)
    async with browser.session.post(
        browser.url(KEYS),
        data={"_csrf": csrf_of(page), "name": "desktop app"},
        headers={"Origin": browser.origin},
        allow_redirects=False,
    ) as reply:
        assert reply.status == 201 and reply.headers["Cache-Control"] == "no-store"
        created = await reply.text()
    key = re.search(r'id="key-secret">(forge_uk_[^<]+)<', created)
    assert key is not None
    assert "Never" in created  # not used yet
    urls = [htmllib.unescape(u) for u in re.findall(r'<pre class="paste"[^>]*>([^<]+)<', created)]
    assert all(key.group(1) in url for url in urls) and len(urls) >= 4
    latest = next(u for u in urls if "/releases/latest?" in u)
    # the page's URL works with no header, for a private repository, as an updater sends it
    path = latest.split("forge.test", 1)[1]
    answer = await client.get(path)
    assert answer.status == 200
    download = (await answer.json())["assets"][0]["browser_download_url"]
    got = await client.get(download.split("forge.test", 1)[1])
    assert got.status == 200 and await got.read() == b"one"
    # listed without its secret, with its last use (within the minute it was used)
    _, listing = await browser.get(KEYS)
    assert "desktop app" in listing and key.group(1) not in listing
    used = await db.fetchval("SELECT last_used_at FROM releases.update_keys")
    assert used is not None and used.strftime("%Y-%m-%d %H:%M") in listing
    # revoked: its URLs stop working
    key_id = listing.split('name="id" value="', 1)[1].split('"', 1)[0]
    reply = await browser.submit(f"{KEYS}/revoke", {"id": key_id}, page=listing)
    assert reply.status == 303
    assert (await client.get(path)).status == 404


async def test_a_bad_key_name_is_refused_next_to_the_field(admin: Any, db: Any) -> None:
    _, browser = admin
    _, page = await browser.get(KEYS)
    async with browser.session.post(
        browser.url(KEYS),
        data={"_csrf": csrf_of(page), "name": "   "},
        headers={"Origin": browser.origin},
    ) as reply:
        assert reply.status == 422
        assert "printable" in field_error(await reply.text(), "name")
    assert await db.fetchval("SELECT count(*) FROM releases.update_keys") == 0


async def test_the_tauri_key_is_set_checked_on_console_uploads_and_removed(
    admin: Any, db: Any
) -> None:
    _, browser = admin
    page_path = "/owner/pub/settings/tauri-key"
    _, page = await browser.get(page_path)
    async with browser.session.post(
        browser.url(page_path),
        data={"_csrf": csrf_of(page), "public_key": "not a key", "action": "set"},
        headers={"Origin": browser.origin},
    ) as reply:
        assert reply.status == 422 and field_error(await reply.text(), "public_key")
    signer = Signer.new()
    reply = await browser.submit(page_path, {"public_key": signer.tauri_form}, page=page)
    assert reply.status == 303
    _, page = await browser.get(page_path)
    assert signer.key_id[::-1].hex().upper() in page.upper()
    # a console upload of a bad signature is refused by the API's own check, in words
    bundle = b"bundle bytes"
    status, _, _ = await upload(browser, "v1.0.0", "App.app.tar.gz", bundle)
    assert status == 303
    status, _, body = await upload(
        browser, "v1.0.0", "App.app.tar.gz.sig", Signer.new().sign(bundle)
    )
    assert status == 422 and "App.app.tar.gz.sig" in field_error(body, "attachment")
    status, _, _ = await upload(browser, "v1.0.0", "App.app.tar.gz.sig", signer.sign(bundle))
    assert status == 303
    reply = await browser.submit(page_path, {"action": "remove"}, page=page)
    assert reply.status == 303
    assert await db.fetchval("SELECT count(*) FROM releases.signing_keys") == 0


async def test_repository_settings_change_who_may_read(admin: Any, db: Any) -> None:
    client, browser = admin
    assert (await client.get("/owner/pub/releases")).status == 200
    _, page = await browser.get("/owner/pub/settings")
    assert 'id="visibility-public" name="visibility" value="public" checked' in page
    reply = await browser.submit(
        "/owner/pub/settings", {"visibility": "private", "public_releases": "on"}, page=page
    )
    assert reply.status == 303
    flags = await db.fetchrow(
        "SELECT private, public_landing, public_releases FROM core.repositories WHERE name='pub'"
    )
    assert tuple(flags) == (True, False, True)
    reply = await browser.submit("/owner/pub/settings", {"visibility": "private"}, page=page)
    assert (await client.get("/owner/pub/releases")).status == 401  # at once on this replica


async def test_a_keys_last_use_is_written_at_most_once_a_minute(admin: Any, db: Any) -> None:
    client, browser = admin
    _, page = await browser.get(KEYS)
    async with browser.session.post(
        browser.url(KEYS),
        data={"_csrf": csrf_of(page), "name": "ci"},
        headers={"Origin": browser.origin},
    ) as reply:
        key = re.search(r'id="key-secret">(forge_uk_[^<]+)<', await reply.text())
    assert key is not None
    latest = f"/api/v2/repos/owner/priv/releases/latest?key={key.group(1)}"
    assert (await client.get(latest)).status == 200
    first = await db.fetchval("SELECT last_used_at FROM releases.update_keys")
    await db.execute("UPDATE releases.update_keys SET last_used_at = 'epoch'")
    assert (await client.get(latest)).status == 200  # within the minute: no write
    assert await db.fetchval("SELECT last_used_at FROM releases.update_keys") != first
    assert (
        await db.fetchval("SELECT extract(epoch FROM last_used_at) FROM releases.update_keys")
    ) == 0


async def test_each_updater_is_pointed_at_the_feed_that_serves_it_with_the_checks_limits(
    admin: Any,
) -> None:
    """Squirrel.Mac gets the feed that matches the architecture exactly (never the spec's
    check, whose suffix table hands an Intel Mac the arm64 zip); update-electron-app is told it
    cannot carry a key; the spec's check is offered with its limits."""
    client, browser = admin
    _, page = await browser.get(KEYS)
    async with browser.session.post(
        browser.url(KEYS),
        data={"_csrf": csrf_of(page), "name": "mac app"},
        headers={"Origin": browser.origin},
        allow_redirects=False,
    ) as reply:
        created = htmllib.unescape(await reply.text())
    feeds = dict(re.findall(r"<dt>([^<]+)</dt>\s*<dd><pre class=\"paste\"[^>]*>([^<]+)<", created))
    mac = next(url for label, url in feeds.items() if "Squirrel.Mac" in label)
    assert "/owner/priv/darwin-{arch}/{version}?key=forge_uk_" in mac
    assert not any("Squirrel.Mac" in label and "/update?" in url for label, url in feeds.items())
    path = mac.split("forge.test", 1)[1].format(arch="x64", version="0.9.0")
    answer = await client.get(path)  # no header, a private repository, as Squirrel.Mac asks
    assert answer.status == 200 and (await answer.json())["url"].split("?")[0].endswith(
        "/App-1.0.0-x64.zip"
    )
    assert "update-electron-app builds its own URL" in created
    spec_check = created.split("Update check (the specification", 1)[1]
    for limit in ("arm64 zip", "ignores rollouts", "Windows-only hotfix", "204"):
        assert limit in spec_check, limit


async def test_the_linux_signing_keys_are_shown_to_repository_admins_and_rotated_by_a_site_admin(
    make_client: Any, load: Any, db: Any, settings: Any
) -> None:
    await load(publish_world())
    client = await make_client()
    path = "/owner/pub/settings/linux-key"
    async with await signed_in(client, db, settings, "repoadmin") as browser:
        status, page = await browser.get(path)
        assert status == 200 and "No key yet" in page and "Add a new key" not in page
        refused = await browser.submit(path, {"action": "add", "fingerprint": ""}, page=page)
        assert refused.status == 403
    async with await signed_in(client, db, settings, "siteadmin") as browser:
        _, page = await browser.get(path)
        assert (
            await browser.submit(path, {"action": "add", "fingerprint": ""}, page=page)
        ).status == 303
        assert (
            await browser.submit(path, {"action": "add", "fingerprint": ""}, page=page)
        ).status == 303
        _, page = await browser.get(path)
        first, second = re.findall(r"<code>([0-9A-F]{40})</code>", page)
        assert page.count("signing beside the current key") == 1
        promote = {"action": "promote", "fingerprint": second}
        assert (await browser.submit(path, promote, page=page)).status == 303
        retire = {"action": "retire", "fingerprint": first}
        assert (await browser.submit(path, retire, page=page)).status == 303
        _, page = await browser.get(path)
        assert re.findall(r"<code>([0-9A-F]{40})</code>", page) == [second]
        assert "PRIVATE" not in page
